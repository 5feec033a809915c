//! A line diff in unified format: Myers' O(ND) algorithm in its linear-space form (find the
//! middle snake of an optimal path, split there, recurse), then hunks with context lines.

use std::collections::HashMap;
use std::fmt::Write as _;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Keep,
    Del,
    Ins,
}

/// A unified diff of `old` → `new` with `context` lines around each change, headed
/// `--- old_name` / `+++ new_name`. Empty when the texts are equal.
pub fn unified(old_name: &str, new_name: &str, old: &str, new: &str, context: usize) -> String {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = line_ops(&old_lines, &new_lines);
    if ops.iter().all(|&op| op == Op::Keep) {
        return String::new();
    }
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    // Positions in `ops` of changes, and where each op starts in the old and new text.
    let mut starts = Vec::with_capacity(ops.len() + 1);
    let (mut i, mut j) = (0usize, 0usize);
    for &op in &ops {
        starts.push((i, j));
        match op {
            Op::Keep => {
                i += 1;
                j += 1;
            }
            Op::Del => i += 1,
            Op::Ins => j += 1,
        }
    }
    starts.push((i, j));
    let changes: Vec<usize> = (0..ops.len()).filter(|&k| ops[k] != Op::Keep).collect();
    let mut c = 0;
    while c < changes.len() {
        // Extend the hunk while the next change is close enough for the contexts to touch.
        let first = changes[c];
        while c + 1 < changes.len() && changes[c + 1] - changes[c] - 1 <= 2 * context {
            c += 1;
        }
        let last = changes[c];
        c += 1;
        let from = first.saturating_sub(context);
        let to = (last + 1 + context).min(ops.len());
        let (a0, b0) = starts[from];
        let (a1, b1) = starts[to];
        let _ = writeln!(out, "@@ -{} +{} @@", range(a0, a1 - a0), range(b0, b1 - b0));
        let (mut i, mut j) = (a0, b0);
        for &op in &ops[from..to] {
            match op {
                Op::Keep => {
                    push_line(&mut out, ' ', old_lines[i]);
                    i += 1;
                    j += 1;
                }
                Op::Del => {
                    push_line(&mut out, '-', old_lines[i]);
                    i += 1;
                }
                Op::Ins => {
                    push_line(&mut out, '+', new_lines[j]);
                    j += 1;
                }
            }
        }
    }
    out
}

/// `start,count` as unified diffs write it: 1-based, `,count` left out when it is 1, and
/// the line before the hunk as the start when the hunk is empty on that side.
fn range(start0: usize, count: usize) -> String {
    match count {
        0 => format!("{start0},0"),
        1 => format!("{}", start0 + 1),
        n => format!("{},{n}", start0 + 1),
    }
}

fn push_line(out: &mut String, prefix: char, line: &str) {
    out.push(prefix);
    out.push_str(line);
    if !line.ends_with('\n') {
        out.push_str("\n\\ No newline at end of file\n");
    }
}

/// The shortest edit script from `a` to `b`, with each run of changes written as its
/// deletions first, then its insertions.
fn line_ops<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Op> {
    let mut ids: HashMap<&str, u32> = HashMap::new();
    let mut intern = |lines: &[&'a str]| -> Vec<u32> {
        lines
            .iter()
            .map(|&s| {
                let next = ids.len() as u32;
                *ids.entry(s).or_insert(next)
            })
            .collect()
    };
    let a = intern(a);
    let b = intern(b);
    let mut ops = Vec::with_capacity(a.len() + b.len());
    diff_rec(&a, &b, &mut ops);
    let mut out = Vec::with_capacity(ops.len());
    let mut k = 0;
    while k < ops.len() {
        if ops[k] == Op::Keep {
            out.push(Op::Keep);
            k += 1;
            continue;
        }
        let end = ops[k..]
            .iter()
            .position(|&op| op == Op::Keep)
            .map_or(ops.len(), |p| k + p);
        let dels = ops[k..end].iter().filter(|&&op| op == Op::Del).count();
        out.extend(std::iter::repeat_n(Op::Del, dels));
        out.extend(std::iter::repeat_n(Op::Ins, end - k - dels));
        k = end;
    }
    out
}

fn diff_rec(a: &[u32], b: &[u32], ops: &mut Vec<Op>) {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a, b) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    ops.extend(std::iter::repeat_n(Op::Keep, prefix));
    if a.is_empty() || b.is_empty() {
        ops.extend(std::iter::repeat_n(Op::Del, a.len()));
        ops.extend(std::iter::repeat_n(Op::Ins, b.len()));
    } else {
        let (x, y) = middle_snake(a, b);
        if (x, y) == (0, 0) || (x, y) == (a.len(), b.len()) {
            // Cannot happen once common ends are trimmed (the distance is then ≥ 2); keep
            // the recursion finite regardless.
            ops.extend(std::iter::repeat_n(Op::Del, a.len()));
            ops.extend(std::iter::repeat_n(Op::Ins, b.len()));
        } else {
            diff_rec(&a[..x], &b[..y], ops);
            diff_rec(&a[x..], &b[y..], ops);
        }
    }
    ops.extend(std::iter::repeat_n(Op::Keep, suffix));
}

/// Marks a diagonal that no path reaches (in the furthest-x tables of `middle_snake`).
const NONE: isize = -1;

/// A length as a signed coordinate (a slice never holds more than `isize::MAX` items).
fn signed(len: usize) -> isize {
    isize::try_from(len).unwrap_or(isize::MAX)
}

/// A point on an optimal edit path through the middle of it: searches forward from the
/// start and backward from the end, one edit at a time each, until the two furthest
/// reaching paths meet on a diagonal.
#[allow(clippy::many_single_char_names)] // the names of Myers' paper
fn middle_snake(a: &[u32], b: &[u32]) -> (usize, usize) {
    let (n, m) = (signed(a.len()), signed(b.len()));
    let delta = n - m;
    let odd = delta % 2 != 0;
    let max = a.len() + b.len();
    let off = signed(max) + 1;
    // Furthest x on each diagonal k = x − y (forward) or c = p − q (backward, where p and q
    // count lines consumed from the ends).
    let mut fwd = vec![NONE; 2 * max + 3];
    let mut bwd = vec![NONE; 2 * max + 3];
    let at = |k: isize| (k + off) as usize;
    for d in 0..=(signed(max) + 1) / 2 {
        for k in (-d..=d).step_by(2) {
            let Some(x) = step(&fwd, d, k, n, m, at) else {
                fwd[at(k)] = NONE;
                continue;
            };
            let (mut x, mut y) = (x, x - k);
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            fwd[at(k)] = x;
            let c = delta - k;
            if odd && (-(d - 1)..=d - 1).contains(&c) && bwd[at(c)] != NONE && x + bwd[at(c)] >= n {
                return (x as usize, y as usize);
            }
        }
        for c in (-d..=d).step_by(2) {
            let Some(p) = step(&bwd, d, c, n, m, at) else {
                bwd[at(c)] = NONE;
                continue;
            };
            let (mut p, mut q) = (p, p - c);
            while p < n && q < m && a[(n - p - 1) as usize] == b[(m - q - 1) as usize] {
                p += 1;
                q += 1;
            }
            bwd[at(c)] = p;
            let k = delta - c;
            if !odd && (-d..=d).contains(&k) && fwd[at(k)] != NONE && fwd[at(k)] + p >= n {
                return ((n - p) as usize, (m - q) as usize);
            }
        }
    }
    (0, 0)
}

/// Where the furthest path with `d` edits lands on diagonal `k` before its snake: one step
/// right from diagonal k−1 or one down from k+1, whichever gets further and stays inside.
#[allow(clippy::many_single_char_names)] // the names of Myers' paper
fn step(
    v: &[isize],
    d: isize,
    k: isize,
    n: isize,
    m: isize,
    at: impl Fn(isize) -> usize,
) -> Option<isize> {
    if d == 0 {
        return Some(0);
    }
    let down = (k < d)
        .then(|| v[at(k + 1)])
        .filter(|&x| x >= 0 && x - k <= m);
    let right = (k > -d)
        .then(|| v[at(k - 1)])
        .filter(|&x| x >= 0 && x < n)
        .map(|x| x + 1);
    match (down, right) {
        (Some(x), Some(r)) => Some(x.max(r)),
        (x, r) => x.or(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lcs(a: &[u32], b: &[u32]) -> usize {
        let mut t = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                t[i][j] = if a[i] == b[j] {
                    t[i + 1][j + 1] + 1
                } else {
                    t[i + 1][j].max(t[i][j + 1])
                };
            }
        }
        t[0][0]
    }

    proptest! {
        #[test]
        fn edit_script_is_shortest_and_rebuilds_both_sides(
            a in proptest::collection::vec(0u32..4, 0..40),
            b in proptest::collection::vec(0u32..4, 0..40),
        ) {
            let mut ops = Vec::new();
            diff_rec(&a, &b, &mut ops);
            let (mut i, mut j, mut old, mut new) = (0, 0, Vec::new(), Vec::new());
            for op in &ops {
                match op {
                    Op::Keep => { prop_assert_eq!(a[i], b[j]); old.push(a[i]); new.push(b[j]); i += 1; j += 1; }
                    Op::Del => { old.push(a[i]); i += 1; }
                    Op::Ins => { new.push(b[j]); j += 1; }
                }
            }
            prop_assert_eq!(&old, &a);
            prop_assert_eq!(&new, &b);
            let edits = ops.iter().filter(|&&op| op != Op::Keep).count();
            prop_assert_eq!(edits, a.len() + b.len() - 2 * lcs(&a, &b));
        }
    }

    #[test]
    fn hunks_have_context_and_merge_when_close() {
        let line = |i: u32| i.to_string() + "\n";
        let old: String = (1..=20).map(line).collect();
        let new: String = (1..=20)
            .filter(|&i| i != 9)
            .map(|i| match i {
                3 => "three\n".to_owned(),
                18 => "18\neighteen and a half\n".to_owned(),
                i => line(i),
            })
            .collect();
        let got = unified("a", "b", &old, &new, 3);
        let want = "\
--- a
+++ b
@@ -1,12 +1,11 @@
 1
 2
-3
+three
 4
 5
 6
 7
 8
-9
 10
 11
 12
@@ -16,5 +15,6 @@
 16
 17
 18
+eighteen and a half
 19
 20
";
        assert_eq!(got, want);
    }

    #[test]
    fn edges_empty_sides_and_missing_newline() {
        assert_eq!(unified("a", "b", "x\n", "x\n", 3), "");
        assert_eq!(
            unified("a", "b", "", "x\n", 3),
            "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n"
        );
        assert_eq!(
            unified("a", "b", "x\ny\n", "", 3),
            "--- a\n+++ b\n@@ -1,2 +0,0 @@\n-x\n-y\n"
        );
        assert_eq!(
            unified("a", "b", "x\ny", "x\nz", 3),
            "--- a\n+++ b\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+z\n\\ No newline at end of file\n"
        );
    }
}
