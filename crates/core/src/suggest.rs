//! "Did you mean …?": the known word closest to a misspelt one, for diagnostics — a key of a
//! hooks file (`timout` → `timeout`), a tool name in a matcher (`Shel` → `Shell`).

/// Levenshtein distance between `a` and `b`, counted in characters.
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The most edits a word may be from a known one to be taken for its typo: two, as in
/// `onfailure` → `onFailure` or `memroy_mb` → `memory_mb`.
pub(crate) const MAX_TYPO_EDITS: usize = 2;

/// The candidate `word` is most likely a typo of: one equal to it but for case first (`BASH` →
/// `Bash`), else the one fewest edits away, at most [`MAX_TYPO_EDITS`] and fewer than the
/// word's own length (so `ab` is nobody's typo of `x`). Ties go to the earliest candidate.
/// `None` when `word` is itself a candidate or nothing is close.
pub(crate) fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str> + Clone,
) -> Option<&'a str> {
    if candidates.clone().into_iter().any(|c| c == word) {
        return None;
    }
    if let Some(c) = candidates
        .clone()
        .into_iter()
        .find(|c| c.eq_ignore_ascii_case(word))
    {
        return Some(c);
    }
    let len = word.chars().count();
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = distance(word, c);
        if d <= MAX_TYPO_EDITS && d < len && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("timout", "timeout"), 1);
    }

    #[test]
    fn the_closest_known_word_is_suggested() {
        let keys = ["timeout", "onFailure", "on_failure", "command"];
        assert_eq!(closest("timout", keys), Some("timeout"));
        assert_eq!(closest("onfailure", keys), Some("onFailure"));
        assert_eq!(closest("ONFAILURE", keys), Some("onFailure"));
        assert_eq!(closest("command", keys), None, "a known word is no typo");
        assert_eq!(closest("zzzzzzzz", keys), None);
        assert_eq!(closest("Shel", ["Bash", "Shell"]), Some("Shell"));
        assert_eq!(closest("ab", ["x"]), None);
    }
}
