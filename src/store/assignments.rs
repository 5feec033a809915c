//! Who labels which items of a dataset: every item to one annotator, and an overlap share to
//! two (each pair of annotators in turn), so people can be measured against people. Kept
//! beside the labels (`labels/<dataset>/assignment.json`), replaced atomically.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::labels::check_name;
use crate::core::atomic::AtomicFile;
use crate::store::StoreError;

/// A dataset's assignment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assignment {
    /// The dataset's key in `labels/`.
    pub dataset: String,
    /// The annotators sharing its items.
    pub annotators: Vec<String>,
    /// The share of items given to two annotators.
    pub overlap: f64,
    /// The seed of the shuffle that dealt the items, so the assignment can be made again.
    pub seed: u64,
    /// Each annotator's items, in dataset order.
    pub items: BTreeMap<String, Vec<String>>,
    /// The items given to two annotators, in dataset order.
    pub shared: Vec<String>,
}

impl Assignment {
    /// Assigns `ids` (in dataset order) among `annotators`: a seeded shuffle picks the
    /// `overlap` share (rounded) for pairs — every pair in turn, so each pair shares about
    /// as many items — and the rest go one each to whoever has the fewest so far.
    pub fn new(
        dataset: &str,
        ids: &[String],
        annotators: &[String],
        overlap: f64,
        seed: u64,
    ) -> Result<Assignment, StoreError> {
        let mut people: Vec<String> = Vec::new();
        for a in annotators {
            check_name("annotator", a)?;
            if !people.contains(a) {
                people.push(a.clone());
            }
        }
        if people.is_empty() {
            return Err(StoreError::Refused("name at least one annotator".into()));
        }
        if !(0.0..=1.0).contains(&overlap) {
            return Err(StoreError::Refused(format!(
                "the overlap is a share between 0 and 1 (0.2: a fifth of the items to two annotators), not {overlap}"
            )));
        }
        if overlap > 0.0 && people.len() < 2 {
            return Err(StoreError::Refused(
                "an overlap needs two annotators or more".into(),
            ));
        }
        let pairs: Vec<(usize, usize)> = (0..people.len())
            .flat_map(|a| (a + 1..people.len()).map(move |b| (a, b)))
            .collect();
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| (mix(seed, &ids[i]), i));
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )] // a share in [0, 1] of a count far below 2^52: the result is in 0..=len
        let shared_count = ((overlap * ids.len() as f64).round() as usize).min(ids.len());
        let mut load = vec![0usize; people.len()];
        let mut owners: Vec<Vec<usize>> = vec![Vec::new(); ids.len()];
        for (k, &i) in order.iter().enumerate() {
            if k < shared_count {
                let (a, b) = pairs[k % pairs.len()];
                owners[i] = vec![a, b];
                load[a] += 1;
                load[b] += 1;
            } else {
                // Fewest items so far; ties to the earlier name.
                let who = (0..people.len()).min_by_key(|&p| (load[p], p)).unwrap_or(0);
                owners[i] = vec![who];
                load[who] += 1;
            }
        }
        let mut items: BTreeMap<String, Vec<String>> =
            people.iter().map(|p| (p.clone(), Vec::new())).collect();
        let mut shared = Vec::new();
        for (i, who) in owners.iter().enumerate() {
            for &p in who {
                items
                    .entry(people[p].clone())
                    .or_default()
                    .push(ids[i].clone());
            }
            if who.len() > 1 {
                shared.push(ids[i].clone());
            }
        }
        Ok(Assignment {
            dataset: dataset.to_owned(),
            annotators: people,
            overlap,
            seed,
            items,
            shared,
        })
    }

    /// The items given to `annotator` (`None`: not named in the assignment).
    pub fn of(&self, annotator: &str) -> Option<BTreeSet<String>> {
        self.items
            .get(annotator)
            .map(|v| v.iter().cloned().collect())
    }
}

/// Where a dataset's assignment is kept.
pub fn path(labels_dir: &Path, dataset: &str) -> PathBuf {
    labels_dir.join(dataset).join("assignment.json")
}

/// The dataset's assignment, if one was made (an unreadable one is an error: labelling on
/// silently without it would hand items to the wrong people).
pub fn read(labels_dir: &Path, dataset: &str) -> Result<Option<Assignment>, StoreError> {
    check_name("dataset", dataset)?;
    let file = path(labels_dir, dataset);
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(StoreError::Io {
                path: file.display().to_string(),
                source,
            });
        }
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        StoreError::Refused(format!(
            "{}:{}:{}: not an assignment ({e}); make it again with `rubricate labels assign`",
            file.display(),
            e.line(),
            e.column()
        ))
    })
}

/// Writes the assignment (atomically; the folder is made if needed).
pub fn write(labels_dir: &Path, a: &Assignment) -> Result<PathBuf, StoreError> {
    check_name("dataset", &a.dataset)?;
    let file = path(labels_dir, &a.dataset);
    let io = |source: std::io::Error| StoreError::Io {
        path: file.display().to_string(),
        source,
    };
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let text = serde_json::to_string_pretty(a)
        .map_err(|e| StoreError::Refused(format!("cannot write the assignment: {e}")))?;
    AtomicFile::write_whole(&file, format!("{text}\n").as_bytes()).map_err(io)?;
    Ok(file)
}

/// A seeded 64-bit mix of an item id (FNV-1a, then splitmix64's finaliser): the shuffle is
/// the same on every machine and for every run with the seed.
fn mix(seed: u64, id: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for b in id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("q{i:03}")).collect()
    }

    #[test]
    fn a_fifth_of_the_items_go_to_two_people_and_every_pair_shares_some() {
        let people: Vec<String> = ["alice", "bob", "carol"].map(String::from).to_vec();
        let a = Assignment::new("d", &ids(100), &people, 0.2, 7).unwrap();
        assert_eq!(a.shared.len(), 20);
        let total: usize = a.items.values().map(Vec::len).sum();
        assert_eq!(total, 120, "every item once, the shared ones twice");
        for p in &people {
            let n = a.items[p].len();
            assert!((39..=41).contains(&n), "{p}: {n}");
        }
        for (x, y) in [("alice", "bob"), ("alice", "carol"), ("bob", "carol")] {
            let (sx, sy) = (a.of(x).unwrap(), a.of(y).unwrap());
            assert!(sx.intersection(&sy).count() >= 6, "{x} and {y}");
        }
        // The same seed, the same assignment; another seed, another one.
        assert_eq!(a, Assignment::new("d", &ids(100), &people, 0.2, 7).unwrap());
        assert_ne!(
            a.shared,
            Assignment::new("d", &ids(100), &people, 0.2, 8)
                .unwrap()
                .shared
        );
    }

    #[test]
    fn bad_shares_and_names_are_refused() {
        let one = vec!["alice".to_owned()];
        assert!(Assignment::new("d", &ids(5), &one, 0.2, 0).is_err());
        assert!(Assignment::new("d", &ids(5), &one, 0.0, 0).is_ok());
        let two = vec!["alice".to_owned(), "../bob".to_owned()];
        assert!(Assignment::new("d", &ids(5), &two, 0.2, 0).is_err());
        let two = vec!["alice".to_owned(), "bob".to_owned()];
        assert!(Assignment::new("d", &ids(5), &two, 1.5, 0).is_err());
        assert!(Assignment::new("d", &ids(5), &[], 0.0, 0).is_err());
    }
}
