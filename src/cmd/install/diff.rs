//! The change `install` makes, shown as a line diff (`-` removed, `+` added, two lines of
//! context) before anything is written.

/// Files with more lines than this on both sides are summarised instead (the diff's table is
/// the product of the two lengths).
const MAX_CELLS: usize = 4_000_000;

/// Lines of context around a change.
const CONTEXT: usize = 2;

/// The diff of `old` and `new`, headed with `label`; empty when they are equal.
pub(super) fn diff(label: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let mut out = format!("--- {label}\n+++ {label} (hookbox)\n");
    if a.len().saturating_mul(b.len()) > MAX_CELLS {
        out.push_str(&format!(
            "(too long to show: {} lines before, {} after)\n",
            a.len(),
            b.len()
        ));
        return out;
    }
    // Longest common subsequence, from the end.
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            ops.push(('+', b[j]));
            j += 1;
        } else {
            ops.push(('-', a[i]));
            i += 1;
        }
    }
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, (k, _))| *k != ' ')
        .map(|(n, _)| n)
        .collect();
    let near = |n: usize| changed.iter().any(|&c| c.abs_diff(n) <= CONTEXT);
    let mut skipped = false;
    for (n, (kind, line)) in ops.iter().enumerate() {
        if near(n) {
            out.push_str(&format!("{kind}{line}\n"));
            skipped = false;
        } else if !skipped {
            out.push_str("@@\n");
            skipped = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_added_and_removed_lines_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\n";
        let new = "a\nb\nc\nX\nd\ne\nf\ng\n";
        let d = diff("f", old, new);
        assert!(d.contains("+X\n"), "{d}");
        assert!(d.contains(" c\n") && d.contains(" d\n"), "{d}");
        assert!(!d.contains(" a\n"), "only two lines of context: {d}");
        assert_eq!(diff("f", old, old), "");
        assert!(diff("f", "x\n", "").contains("-x"));
    }
}
