//! Few-shot examples drawn from labels (`examples: {from: labels, …}`), resolved once when
//! a run starts: the run's rubric then holds the examples themselves, so its manifest
//! snapshot records them and a resumed run shows the judge the same ones.
//!
//! An item the run grades never serves as an example: the items the run grades (its subset,
//! or every item) are read first, and a labelled item is a candidate only when neither its
//! id nor its submission's text is among theirs. The prompt checks again per item
//! (`engine::judge::examples`). The draw is seeded: candidates in id order, shuffled by the
//! draw's seed per verdict, then taken one verdict at a time (`balance: verdict`), so each
//! verdict the labels hold gets an equal share while it lasts.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;

use super::Error;
use crate::formats::LoadedRubric;
use crate::formats::dataset::{ReadOptions, open_dataset};
use crate::model::{Balance, Criterion, Example, Examples, LabelDraw, Method, Verdict};
use crate::store::labels;

/// What the run grades, for the draw to keep away from.
pub struct Graded<'a> {
    /// The dataset graded.
    pub dataset: &'a Path,
    /// How it is read.
    pub opts: ReadOptions,
    /// The positions graded (`None`: every item).
    pub only: Option<&'a HashSet<usize>>,
}

/// The rubric with every draw from labels replaced by the examples drawn; unchanged when it
/// draws none. `labels_dir`: the workspace's `labels/` (`None`: no workspace).
pub fn resolve(
    loaded: LoadedRubric,
    graded: &Graded<'_>,
    labels_dir: Option<&Path>,
) -> Result<LoadedRubric, Error> {
    let rubric_draw = match &loaded.rubric.examples {
        Some(Examples::FromLabels(d)) => Some(d.clone()),
        _ => None,
    };
    // (criterion position, its draw, whether the draw is the rubric's).
    let mut wanted: Vec<(usize, LabelDraw, bool)> = Vec::new();
    for (i, c) in loaded.rubric.criteria.iter().enumerate() {
        match (&c.examples, &rubric_draw) {
            (Some(Examples::FromLabels(d)), _) => wanted.push((i, d.clone(), false)),
            (None, Some(d)) if matches!(c.method, Method::Judge(_)) => {
                wanted.push((i, d.clone(), true));
            }
            _ => {}
        }
    }
    if wanted.is_empty() && rubric_draw.is_none() {
        return Ok(loaded);
    }
    let place = |i: usize, of_rubric: bool, message: &str| {
        let d = if of_rubric {
            loaded.diagnostic(None, "examples", message)
        } else {
            loaded.diagnostic(Some(i), "examples", message)
        };
        Error::input(d.to_string())
    };
    let Some(labels_dir) = labels_dir else {
        let (i, r) = wanted.first().map_or((0, true), |(i, _, r)| (*i, *r));
        return Err(place(
            i,
            r,
            "examples drawn from labels need a workspace (a folder with rubricate.yaml) whose labels/ holds them",
        ));
    };
    let avoid = Avoid::read(graded)?;
    let mut sources: HashMap<(PathBuf, Option<String>), Source> = HashMap::new();
    let mut rubric = (*loaded.rubric).clone();
    for (i, draw, of_rubric) in wanted {
        let path = draw
            .dataset
            .as_ref()
            .map_or_else(|| graded.dataset.to_path_buf(), |d| loaded.base_dir.join(d));
        let source = match sources.entry((path.clone(), draw.annotator.clone())) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(
                Source::read(
                    labels_dir,
                    &path,
                    draw.annotator.as_deref(),
                    graded.opts,
                    &avoid,
                )
                .map_err(|e| place(i, of_rubric, &e.to_string()))?,
            ),
        };
        let c = &rubric.criteria[i];
        let drawn = draw_for(c, &draw, source);
        if drawn.is_empty() {
            return Err(place(
                i,
                of_rubric,
                &format!(
                    "examples drawn from labels found none for criterion '{}': no labelled item of {} by '{}' outside the items this run grades has a verdict for it; label other items, grade a subset (--limit, --sample, --items), or draw from another dataset (`dataset:`)",
                    c.id,
                    path.display(),
                    source.annotator
                ),
            ));
        }
        rubric.criteria[i].examples = Some(Examples::Written(drawn));
    }
    if rubric_draw.is_some() {
        // Given out to the criteria above.
        rubric.examples = None;
    }
    Ok(LoadedRubric {
        rubric: Arc::new(rubric),
        ..loaded
    })
}

/// The ids and submissions (by a hash of the text) of the items the run grades.
struct Avoid {
    ids: HashSet<String>,
    texts: HashSet<[u8; 8]>,
}

fn text_key(text: &str) -> [u8; 8] {
    let h = crate::core::hash::sha256(text);
    let mut k = [0u8; 8];
    k.copy_from_slice(&h[..8]);
    k
}

impl Avoid {
    fn read(graded: &Graded<'_>) -> Result<Self, Error> {
        let dataset =
            open_dataset(graded.dataset, graded.opts).map_err(|d| Error::input(d.to_string()))?;
        let mut out = Avoid {
            ids: HashSet::new(),
            texts: HashSet::new(),
        };
        for (pos, item) in dataset.items.enumerate() {
            if graded.only.is_some_and(|only| !only.contains(&pos)) {
                continue;
            }
            let item = item.map_err(|d| Error::input(d.to_string()))?;
            out.texts.insert(text_key(&item.submission));
            out.ids.insert(item.id);
        }
        Ok(out)
    }

    fn keeps(&self, id: &str, submission: &str) -> bool {
        !self.ids.contains(id) && !self.texts.contains(&text_key(submission))
    }
}

/// One annotator's labels of one dataset, with the submissions of the items that may serve.
struct Source {
    annotator: String,
    /// (item id, criterion id) → (label, note).
    labels: BTreeMap<(String, String), (serde_json::Value, String)>,
    /// Submissions of labelled items the run does not grade.
    submissions: HashMap<String, String>,
}

impl Source {
    fn read(
        labels_dir: &Path,
        dataset: &Path,
        annotator: Option<&str>,
        opts: ReadOptions,
        avoid: &Avoid,
    ) -> Result<Self, Error> {
        let key = labels::dataset_key(dataset);
        let people = labels::annotators(labels_dir, &key);
        let annotator = super::agreement::choose_annotator(&key, &people, annotator)?;
        let labels: BTreeMap<_, _> =
            labels::current(&labels::journal_path(labels_dir, &key, &annotator))?
                .into_iter()
                .filter(|(_, l)| !l.verdict.is_null())
                .map(|(k, l)| (k, (l.verdict, l.note)))
                .collect();
        let labelled: HashSet<&str> = labels.keys().map(|(i, _)| i.as_str()).collect();
        let mut submissions = HashMap::new();
        let items = open_dataset(dataset, opts).map_err(|d| Error::input(d.to_string()))?;
        for item in items.items {
            let item = item.map_err(|d| Error::input(d.to_string()))?;
            if labelled.contains(item.id.as_str()) && avoid.keeps(&item.id, &item.submission) {
                submissions.insert(item.id, item.submission);
            }
        }
        Ok(Source {
            annotator,
            labels,
            submissions,
        })
    }
}

/// `draw.n` examples of criterion `c` from `source`, as the draw's balance and seed say.
fn draw_for(c: &Criterion, draw: &LabelDraw, source: &Source) -> Vec<Example> {
    // Candidates in item id order (the labels' order), grouped by verdict text.
    let mut groups: BTreeMap<String, Vec<(String, Verdict, String)>> = BTreeMap::new();
    for ((item, criterion), (label, note)) in &source.labels {
        if criterion != &c.id || !source.submissions.contains_key(item) {
            continue;
        }
        let Some(v) = crate::metrics::judge_vs_human::label_verdict(c, label) else {
            continue;
        };
        let group = match draw.balance {
            Balance::Verdict => v.to_string(),
            Balance::None => String::new(),
        };
        groups
            .entry(group)
            .or_default()
            .push((item.clone(), v, note.clone()));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(draw.seed);
    let mut queues: Vec<std::vec::IntoIter<(String, Verdict, String)>> = groups
        .into_values()
        .map(|mut g| {
            g.shuffle(&mut rng);
            g.into_iter()
        })
        .collect();
    let mut out = Vec::new();
    // One from each verdict in turn until `n` or none is left.
    while out.len() < draw.n {
        let before = out.len();
        for q in &mut queues {
            if out.len() == draw.n {
                break;
            }
            if let Some((item, verdict, note)) = q.next()
                && let Some(submission) = source.submissions.get(&item)
            {
                out.push(Example {
                    submission: submission.clone(),
                    verdict,
                    reason: (!note.trim().is_empty()).then_some(note),
                    item: Some(item),
                });
            }
        }
        if out.len() == before {
            break;
        }
    }
    out
}
