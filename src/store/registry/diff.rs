//! A line diff in unified format (`similar`'s Myers diff), with context lines around each
//! change: what `rubricate rubrics diff` and the UI's diff show.

/// A unified diff of `old` → `new` with `context` lines around each change, headed
/// `--- old_name` / `+++ new_name`. Empty when the texts are equal.
pub fn unified(old_name: &str, new_name: &str, old: &str, new: &str, context: usize) -> String {
    if old == new {
        return String::new();
    }
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(context)
        .header(old_name, new_name)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

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
