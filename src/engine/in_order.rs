//! Putting finished items back in input order.

use std::collections::BTreeMap;

/// Restores input order: feed finished items in any order, take them out in order.
#[derive(Debug, Default)]
pub struct InOrder<T> {
    next: usize,
    waiting: BTreeMap<usize, T>,
}

impl<T> InOrder<T> {
    /// Nothing waiting; the first item expected is position 0.
    pub fn new() -> Self {
        Self {
            next: 0,
            waiting: BTreeMap::new(),
        }
    }

    /// Adds item `index`; returns every item now ready, in order.
    pub fn push(&mut self, index: usize, value: T) -> Vec<T> {
        self.waiting.insert(index, value);
        let mut ready = Vec::new();
        while let Some(v) = self.waiting.remove(&self.next) {
            ready.push(v);
            self.next += 1;
        }
        ready
    }

    /// Items still waiting for an earlier one.
    pub fn pending(&self) -> usize {
        self.waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use super::InOrder;

    #[test]
    fn in_order_releases_contiguous_runs() {
        let mut o = InOrder::new();
        assert!(o.push(1, "b").is_empty());
        assert_eq!(o.push(0, "a"), vec!["a", "b"]);
        assert!(o.push(3, "d").is_empty());
        assert_eq!(o.pending(), 1);
        assert_eq!(o.push(2, "c"), vec!["c", "d"]);
    }
}
