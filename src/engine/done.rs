//! The cells a pass skips because they are graded already, as (item position, criterion
//! id), kept compact: a resumed million-item run must not hold millions of keys.

use std::collections::{HashMap, HashSet};

/// A set of cells (item position, criterion id).
///
/// Built in item order (as a journal is read back), it keeps one entry per run of
/// consecutive items holding the same criteria, so a finished run of any size takes a few
/// bytes and a run cut short a few more. Criterion ids are kept once each. Cells added out
/// of item order, and cells taken out again (a retry), are kept aside one by one.
#[derive(Debug, Clone, Default)]
pub struct CellSet {
    /// Criterion ids, each once; a cell refers to its id by position here.
    names: Vec<String>,
    index: HashMap<String, u32>,
    /// Distinct sets of criteria (sorted positions in `names`); the first is empty.
    sets: Vec<Vec<u32>>,
    set_index: HashMap<Vec<u32>, u32>,
    /// (first item, set): from its first item up to the next span's (the last one: up to
    /// `end`), every item holds that set.
    spans: Vec<(usize, u32)>,
    /// One past the last item the spans cover.
    end: usize,
    /// The item being added (its set grows while cells of it come) and its criteria.
    open: Option<(usize, Vec<u32>)>,
    /// Cells added before an item already added (out of order).
    extra: HashSet<(usize, u32)>,
    /// Cells taken out.
    removed: HashSet<(usize, u32)>,
    len: usize,
}

impl CellSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many cells the set holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The set holds no cell.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the set holds criterion `criterion` of item `item`.
    pub fn contains(&self, item: usize, criterion: &str) -> bool {
        self.index
            .get(criterion)
            .is_some_and(|&name| self.holds(item, name) && !self.removed.contains(&(item, name)))
    }

    /// Adds a cell; true when it was not in the set. Fastest and smallest when cells come
    /// in item order.
    pub fn insert(&mut self, item: usize, criterion: &str) -> bool {
        let name = self.name(criterion);
        if self.holds(item, name) {
            let back = self.removed.remove(&(item, name));
            self.len += usize::from(back);
            return back;
        }
        match &mut self.open {
            Some((open, set)) if *open == item => {
                let at = set.partition_point(|&n| n < name);
                set.insert(at, name);
            }
            Some((open, _)) if *open > item => {
                self.extra.insert((item, name));
            }
            _ if item < self.end => {
                self.extra.insert((item, name));
            }
            _ => {
                self.close();
                self.open = Some((item, vec![name]));
            }
        }
        self.len += 1;
        true
    }

    /// Takes a cell out; true when it was in the set.
    pub fn remove(&mut self, item: usize, criterion: &str) -> bool {
        let Some(&name) = self.index.get(criterion) else {
            return false;
        };
        if !self.holds(item, name) || !self.removed.insert((item, name)) {
            return false;
        }
        self.len -= 1;
        true
    }

    /// Whether the cell was added (taken out or not).
    fn holds(&self, item: usize, name: u32) -> bool {
        if let Some((open, set)) = &self.open
            && *open == item
        {
            return set.binary_search(&name).is_ok();
        }
        if item < self.end {
            let at = self.spans.partition_point(|&(first, _)| first <= item);
            if let Some(&(_, set)) = at.checked_sub(1).and_then(|i| self.spans.get(i))
                && self.sets[set as usize].binary_search(&name).is_ok()
            {
                return true;
            }
        }
        self.extra.contains(&(item, name))
    }

    fn name(&mut self, criterion: &str) -> u32 {
        if let Some(&n) = self.index.get(criterion) {
            return n;
        }
        let n = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        self.names.push(criterion.to_owned());
        self.index.insert(criterion.to_owned(), n);
        n
    }

    /// Moves the open item into the spans.
    fn close(&mut self) {
        let Some((item, set)) = self.open.take() else {
            return;
        };
        if self.sets.is_empty() {
            self.sets.push(Vec::new());
            self.set_index.insert(Vec::new(), 0);
        }
        if item > self.end {
            // Items between hold nothing.
            self.push_span(self.end, 0);
        }
        let id = if let Some(&id) = self.set_index.get(&set) {
            id
        } else {
            let id = u32::try_from(self.sets.len()).unwrap_or(u32::MAX);
            self.sets.push(set.clone());
            self.set_index.insert(set, id);
            id
        };
        self.push_span(item, id);
        self.end = item + 1;
    }

    fn push_span(&mut self, first: usize, set: u32) {
        if self.spans.last().is_none_or(|&(_, last)| last != set) {
            self.spans.push((first, set));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt as _, SeedableRng as _};

    use super::CellSet;

    #[test]
    fn a_finished_run_is_one_span_and_gaps_hold_nothing() {
        let mut s = CellSet::new();
        for item in 0..100_000 {
            for c in ["a", "b", "c"] {
                assert!(s.insert(item, c));
            }
        }
        assert!(!s.insert(5, "b"));
        assert_eq!(s.len(), 300_000);
        assert!(s.contains(0, "a") && s.contains(99_999, "c") && s.contains(500, "b"));
        assert!(!s.contains(100_000, "a") && !s.contains(3, "d"));
        assert_eq!(s.spans.len(), 1, "{:?}", s.spans);
        s.insert(100_005, "a");
        assert!(!s.contains(100_002, "a") && s.contains(100_005, "a"));
        assert!(s.remove(7, "a"));
        assert!(!s.contains(7, "a") && s.contains(7, "b"));
        assert!(!s.remove(7, "a"));
        assert_eq!(s.len(), 300_000);
        assert!(s.insert(7, "a"));
        assert!(s.contains(7, "a"));
        assert_eq!(s.len(), 300_001);
    }

    #[test]
    fn equals_a_hash_set_in_any_order() {
        for seed in 0..200 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut s = CellSet::new();
            let mut reference: HashSet<(usize, String)> = HashSet::new();
            let mut item = 0usize;
            for _ in 0..rng.random_range(0..300) {
                // Mostly in order, sometimes back, sometimes a removal.
                item = match rng.random_range(0..10) {
                    0 => rng.random_range(0..item + 1),
                    1..=3 => item + rng.random_range(0..3),
                    _ => item,
                };
                let c = format!("c{}", rng.random_range(0..6));
                if rng.random_range(0..8) == 0 {
                    assert_eq!(s.remove(item, &c), reference.remove(&(item, c.clone())));
                } else {
                    assert_eq!(s.insert(item, &c), reference.insert((item, c.clone())));
                }
                assert_eq!(s.len(), reference.len(), "seed {seed}");
            }
            for i in 0..item + 3 {
                for k in 0..7 {
                    let c = format!("c{k}");
                    assert_eq!(
                        s.contains(i, &c),
                        reference.contains(&(i, c.clone())),
                        "seed {seed}: ({i}, {c})"
                    );
                }
            }
        }
    }
}
