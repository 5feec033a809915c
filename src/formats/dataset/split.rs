//! Train/test split as autorubric does it: stratified by the whole ground-truth signature,
//! seeded, with exactly `n_train` items in the training set.

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;

use crate::model::Item;

/// The stratum of an item: its whole ground truth, as written (no ground truth is a
/// stratum of its own).
pub fn signature(item: &Item) -> String {
    match &item.ground_truth {
        None => String::new(),
        Some(gt) => format!("{gt:?}"),
    }
}

/// A train set larger than the dataset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--train {wanted} is more than the {items} items in the dataset")]
pub struct TooFewItems {
    /// Items asked for in the train set.
    pub wanted: usize,
    /// Items in the dataset.
    pub items: usize,
}

/// Splits `signatures.len()` items into train and test index lists (each in input order).
///
/// Stratified: every stratum gives the train set its share of `n_train`, rounded down,
/// and the seats left over go to the strata with the largest remainders (ties broken by
/// the seeded generator), so the train set has exactly `n_train` items. Which items of a
/// stratum are chosen is a seeded shuffle (`ChaCha8`, reproducible across platforms).
pub fn split_indices(
    signatures: &[String],
    n_train: usize,
    seed: u64,
    stratify: bool,
) -> Result<(Vec<usize>, Vec<usize>), TooFewItems> {
    let n = signatures.len();
    if n_train > n {
        return Err(TooFewItems {
            wanted: n_train,
            items: n,
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Strata in order of first appearance, so the result does not depend on hashing.
    let mut strata: Vec<(&str, Vec<usize>)> = Vec::new();
    for (i, s) in signatures.iter().enumerate() {
        let key = if stratify { s.as_str() } else { "" };
        match strata.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(i),
            None => strata.push((key, vec![i])),
        }
    }
    let mut seats: Vec<usize> = Vec::with_capacity(strata.len());
    let mut remainders: Vec<(f64, usize)> = Vec::new();
    for (i, (_, members)) in strata.iter().enumerate() {
        let exact = n_train as f64 * members.len() as f64 / n.max(1) as f64;
        let floor = exact.floor() as usize;
        seats.push(floor.min(members.len()));
        remainders.push((exact - floor as f64, i));
    }
    let mut left = n_train - seats.iter().sum::<usize>();
    // Seeded tie-break: shuffle first, then a stable sort by remainder.
    remainders.shuffle(&mut rng);
    remainders.sort_by(|a, b| b.0.total_cmp(&a.0));
    while left > 0 {
        let before = left;
        for &(_, i) in &remainders {
            if left == 0 {
                break;
            }
            if seats[i] < strata[i].1.len() {
                seats[i] += 1;
                left -= 1;
            }
        }
        if left == before {
            break;
        }
    }
    let mut train = Vec::with_capacity(n_train);
    let mut test = Vec::with_capacity(n - n_train);
    for ((_, members), take) in strata.iter().zip(&seats) {
        let mut shuffled = members.clone();
        shuffled.shuffle(&mut rng);
        train.extend_from_slice(&shuffled[..*take]);
        test.extend_from_slice(&shuffled[*take..]);
    }
    train.sort_unstable();
    test.sort_unstable();
    Ok((train, test))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sigs(spec: &[(&str, usize)]) -> Vec<String> {
        spec.iter()
            .flat_map(|(s, n)| std::iter::repeat_n((*s).to_owned(), *n))
            .collect()
    }

    #[test]
    fn exact_count_proportional_strata_and_reproducible() {
        let s = sigs(&[("a", 60), ("b", 30), ("c", 10)]);
        let (train, test) = split_indices(&s, 20, 7, true).unwrap();
        assert_eq!(train.len(), 20);
        assert_eq!(test.len(), 80);
        let count = |set: &[usize], k: &str| set.iter().filter(|&&i| s[i] == k).count();
        assert_eq!(
            (count(&train, "a"), count(&train, "b"), count(&train, "c")),
            (12, 6, 2)
        );
        assert_eq!(split_indices(&s, 20, 7, true).unwrap().0, train);
        assert_ne!(split_indices(&s, 20, 8, true).unwrap().0, train);
    }

    #[test]
    fn leftover_seats_go_to_the_largest_remainders() {
        let s = sigs(&[("a", 5), ("b", 3), ("c", 2)]);
        // Shares of 3: a 1.5, b 0.9, c 0.6 → floors 1, 0, 0; two seats left: b then c.
        let (train, _) = split_indices(&s, 3, 1, true).unwrap();
        let count = |k: &str| train.iter().filter(|&&i| s[i] == k).count();
        assert_eq!((count("a"), count("b"), count("c")), (1, 1, 1));
    }

    #[test]
    fn too_many_train_items_is_an_error() {
        assert!(
            split_indices(&sigs(&[("a", 2)]), 3, 0, true)
                .unwrap_err()
                .to_string()
                .contains("more than the 2 items")
        );
        let (train, test) = split_indices(&sigs(&[("a", 2)]), 2, 0, false).unwrap();
        assert_eq!((train.len(), test.len()), (2, 0));
    }
}
