//! Python's `sum()` of floats as `CPython` 3.12 and later compute it: Neumaier's improved
//! Kahan–Babuška summation, the compensation added once at the end (and only when it is a
//! finite, non-zero number, so an infinite or overflowed sum stays as it is). Earlier
//! Pythons add in order, each addition rounded, as a plain `+=` loop does.

/// A running `sum()` as `CPython` 3.12+ keeps it.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompensatedSum {
    total: f64,
    compensation: f64,
}

impl CompensatedSum {
    /// Adds `x`, keeping what rounding lost.
    pub fn add(&mut self, x: f64) {
        let t = self.total + x;
        self.compensation += if self.total.abs() >= x.abs() {
            (self.total - t) + x
        } else {
            (x - t) + self.total
        };
        self.total = t;
    }

    /// The sum, as `sum()` returns it.
    pub fn value(&self) -> f64 {
        if self.compensation != 0.0 && self.compensation.is_finite() {
            self.total + self.compensation
        } else {
            self.total
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CompensatedSum;

    fn sum(xs: &[f64]) -> f64 {
        let mut s = CompensatedSum::default();
        for x in xs {
            s.add(*x);
        }
        s.value()
    }

    #[test]
    fn sums_as_python_3_12_does() {
        // CPython 3.13: sum([0.1, 0.2, 0.3]) == 0.6; 3.11: 0.6000000000000001.
        assert_eq!(sum(&[0.1, 0.2, 0.3]), 0.6);
        assert_eq!(0.1 + 0.2 + 0.3, 0.600_000_000_000_000_1);
        // CPython 3.13: sum([0.1] * 10) == 1.0; 3.11: 0.9999999999999999.
        assert_eq!(sum(&[0.1; 10]), 1.0);
        assert_eq!(sum(&[1e100, 1.0, -1e100]), 1.0);
        assert_eq!(sum(&[f64::INFINITY, 1.0]), f64::INFINITY);
        assert_eq!(sum(&[]), 0.0);
    }
}
