//! How much text a rule, and a whole dispatch, may add to a verdict (SPEC §4.2: "a rule can
//! never turn an input into an answer many times its size").
//!
//! A hook's answer is already capped by its runner (stdout, an http body, a typed response);
//! what is capped here is what the *verdict* carries, which runners do not see: a prompt rule
//! that repeats `{userMessage}`, eight rules each blocking with a 1,000 KiB reason, a hook
//! answering with 200,000 tiny contexts (each of which becomes an attachment). Text over a
//! limit is cut at a character boundary and ends with a visible marker ([`CUT_MARKER`] …)
//! saying how much was cut and which limit did it, and the hook gets a warning; nothing is
//! dropped without a word. Where a limit can be known at load (a prompt rule's own text and
//! its placeholders), the rule is refused then instead.

use std::fmt::Write as _;

/// Default [`TextLimits::rule_text_bytes`]: 256 KiB. Claude Code caps each hook output string
/// at 10,000 characters; hookbox keeps more, but never an unbounded amount.
pub const DEFAULT_RULE_TEXT_BYTES: usize = 256 * 1024;

/// Default [`TextLimits::dispatch_text_bytes`]: 1 MiB for all rules of one dispatch together.
pub const DEFAULT_DISPATCH_TEXT_BYTES: usize = 1024 * 1024;

/// Default [`TextLimits::rule_contexts`]: 64 contexts per rule.
pub const DEFAULT_RULE_CONTEXTS: usize = 64;

/// Default [`TextLimits::updated_input_bytes`]: 1 MiB of JSON per rule's `updatedInput` (a
/// runner's default output cap; a rewrite cannot be cut, so a larger one fails the hook as
/// `invalid_output`, under its fail mode).
pub const DEFAULT_UPDATED_INPUT_BYTES: usize = 1024 * 1024;

/// The placeholder a prompt rule's text may hold, replaced by the user's prompt.
pub const PROMPT_PLACEHOLDER: &str = "{userMessage}";

/// The most [`PROMPT_PLACEHOLDER`]s one prompt rule may hold: 4. Each is expanded (once per
/// occurrence, as in Agentao's hook system), so a rule's text is at most its template plus four
/// times the prompt — and never more than [`TextLimits::rule_text_bytes`]. A rule with more is
/// refused when it is loaded.
pub const MAX_PROMPT_PLACEHOLDERS: usize = 4;

/// The most bytes a prompt rule's own text may have: [`DEFAULT_RULE_TEXT_BYTES`]. A longer one
/// is refused when it is loaded (it could only ever be cut).
pub const MAX_PROMPT_TEXT_BYTES: usize = DEFAULT_RULE_TEXT_BYTES;

/// How every cut text ends: `…[cut by hookbox: …]`.
pub const CUT_MARKER: &str = "…[cut by hookbox: ";

/// How much text a verdict may carry. Each limit is in bytes of UTF-8; text is cut at a
/// character boundary, followed by a marker of at most 200 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextLimits {
    /// All the text one rule's answer adds — contexts, block and stop reasons, the permission
    /// reason, a Stop follow-up, its system message, warnings — together. Default
    /// [`DEFAULT_RULE_TEXT_BYTES`] (256 KiB). Reasons and decisions come first, contexts
    /// after, so a long context never cuts a deny's reason.
    pub rule_text_bytes: usize,
    /// All the text of one dispatch's rules together, in rule order. Default
    /// [`DEFAULT_DISPATCH_TEXT_BYTES`] (1 MiB). The host's own answer (an HTTP body) may be
    /// capped again on top.
    pub dispatch_text_bytes: usize,
    /// How many contexts one rule may add. Default [`DEFAULT_RULE_CONTEXTS`] (64); each
    /// becomes an attachment, so a count cap keeps 200,000 one-byte contexts from being an
    /// answer 50 times their size.
    pub rule_contexts: usize,
    /// The JSON size of one rule's `updatedInput`. Default [`DEFAULT_UPDATED_INPUT_BYTES`]
    /// (1 MiB); over it the hook fails as `invalid_output`, under its fail mode.
    pub updated_input_bytes: usize,
}

impl Default for TextLimits {
    fn default() -> Self {
        TextLimits {
            rule_text_bytes: DEFAULT_RULE_TEXT_BYTES,
            dispatch_text_bytes: DEFAULT_DISPATCH_TEXT_BYTES,
            rule_contexts: DEFAULT_RULE_CONTEXTS,
            updated_input_bytes: DEFAULT_UPDATED_INPUT_BYTES,
        }
    }
}

/// Which limit is cutting, for markers and warnings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// [`TextLimits::rule_text_bytes`].
    Rule,
    /// [`TextLimits::dispatch_text_bytes`].
    Dispatch,
}

impl Scope {
    fn what(self) -> &'static str {
        match self {
            Scope::Rule => "a rule's text is capped at",
            Scope::Dispatch => "a dispatch's text is capped at",
        }
    }

    fn setting(self) -> &'static str {
        match self {
            Scope::Rule => "rule_text_bytes",
            Scope::Dispatch => "dispatch_text_bytes",
        }
    }
}

/// A byte budget that strings are cut to, in the order they are offered.
#[derive(Debug)]
pub(crate) struct Budget {
    remaining: usize,
    limit: usize,
    scope: Scope,
    /// Bytes cut so far.
    pub(crate) cut: usize,
}

impl Budget {
    pub(crate) fn new(limit: usize, scope: Scope) -> Budget {
        Budget {
            remaining: limit,
            limit,
            scope,
            cut: 0,
        }
    }

    /// A budget of `remaining` bytes, reported as cut by `limit` of `scope`.
    pub(crate) fn with_remaining(remaining: usize, limit: usize, scope: Scope) -> Budget {
        Budget {
            remaining,
            limit,
            scope,
            cut: 0,
        }
    }

    /// Pays for `s`, cutting it (and marking the cut) when it does not fit.
    pub(crate) fn take(&mut self, s: &mut String) {
        if s.len() <= self.remaining {
            self.remaining -= s.len();
            return;
        }
        let keep = floor_char_boundary(s, self.remaining);
        let cut = s.len() - keep;
        s.truncate(keep);
        s.push_str(&self.marker(cut));
        self.remaining = 0;
        self.cut += cut;
    }

    /// Pays for an optional string.
    pub(crate) fn take_opt(&mut self, s: &mut Option<String>) {
        if let Some(s) = s {
            self.take(s);
        }
    }

    /// Pays for a list, keeping at most `max_entries` of it (the last kept one says how many
    /// more were dropped).
    pub(crate) fn take_list(&mut self, list: &mut Vec<String>, max_entries: usize, noun: &str) {
        let dropped: usize = list.iter().skip(max_entries).map(String::len).sum();
        let dropped_n = list.len().saturating_sub(max_entries);
        list.truncate(max_entries);
        for s in list.iter_mut() {
            self.take(s);
        }
        if dropped_n > 0 {
            self.cut += dropped;
            let note = format!(
                "{CUT_MARKER}{dropped_n} more {noun} ({dropped} bytes) dropped; a rule adds at most {max_entries} (rule_contexts)]"
            );
            match list.last_mut() {
                Some(last) => last.push_str(&note),
                None => list.push(note),
            }
        }
    }

    /// The marker after a cut of `cut` bytes.
    fn marker(&self, cut: usize) -> String {
        format!(
            "{CUT_MARKER}{cut} more bytes; {} {} bytes ({})]",
            self.scope.what(),
            self.limit,
            self.scope.setting()
        )
    }

    /// The warning a hook gets when this budget cut its text, if it did.
    pub(crate) fn warning(&self) -> Option<String> {
        (self.cut > 0).then(|| {
            format!(
                "{} bytes of this hook's text were cut: {} {} bytes ({})",
                self.cut,
                self.scope.what(),
                self.limit,
                self.scope.setting()
            )
        })
    }
}

/// The largest char boundary of `s` at or below `at`.
fn floor_char_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    (0..=at).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0)
}

/// `template` with every `needle` replaced by `with`, built to at most `max` bytes: the length
/// is computed first, and a result that would be longer is written only up to `max` and marked
/// (by `scope`) — the long string is never allocated. Returns the text and the bytes cut.
pub(crate) fn bounded_replace(
    template: &str,
    needle: &str,
    with: &str,
    max: usize,
    scope: Scope,
) -> (String, usize) {
    let n = template.matches(needle).count();
    let full = n
        .checked_mul(with.len())
        .and_then(|w| (template.len() - n * needle.len()).checked_add(w))
        .unwrap_or(usize::MAX);
    if full <= max {
        return (template.replace(needle, with), 0);
    }
    let mut budget = Budget::new(max, scope);
    let mut out = String::with_capacity(max);
    let mut pieces = template.split(needle).peekable();
    while let Some(piece) = pieces.next() {
        if !push_within(&mut out, piece, max) {
            break;
        }
        if pieces.peek().is_some() && !push_within(&mut out, with, max) {
            break;
        }
    }
    let cut = full.saturating_sub(out.len());
    budget.cut = cut;
    let _ = write!(out, "{}", budget.marker(cut));
    (out, cut)
}

/// Appends as much of `s` as fits in `max` bytes; `false` once `out` is full.
fn push_within(out: &mut String, s: &str, max: usize) -> bool {
    let room = max - out.len();
    if s.len() <= room {
        out.push_str(s);
        return true;
    }
    out.push_str(&s[..floor_char_boundary(s, room)]);
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_within_the_budget_is_untouched() {
        let mut b = Budget::new(10, Scope::Rule);
        let mut a = "hello".to_owned();
        let mut c = "world".to_owned();
        b.take(&mut a);
        b.take(&mut c);
        assert_eq!((a.as_str(), c.as_str()), ("hello", "world"));
        assert_eq!(b.warning(), None);
    }

    #[test]
    fn text_over_the_budget_is_cut_at_a_char_boundary_and_marked() {
        let mut b = Budget::new(4, Scope::Rule);
        let mut s = "aéééé".to_owned(); // 1 + 4×2 bytes
        b.take(&mut s);
        assert_eq!(
            s,
            "aé…[cut by hookbox: 6 more bytes; a rule's text is capped at 4 bytes (rule_text_bytes)]"
        );
        // Nothing is left for what follows: it keeps only its marker.
        let mut t = "later".to_owned();
        b.take(&mut t);
        assert!(t.starts_with(CUT_MARKER), "{t}");
        assert_eq!(b.cut, 11);
        assert_eq!(
            b.warning().as_deref(),
            Some(
                "11 bytes of this hook's text were cut: a rule's text is capped at 4 bytes (rule_text_bytes)"
            )
        );
    }

    #[test]
    fn lists_keep_their_first_entries_and_say_how_many_went() {
        let mut b = Budget::new(1000, Scope::Rule);
        let mut list: Vec<String> = (0..10).map(|i| format!("c{i}")).collect();
        b.take_list(&mut list, 3, "contexts");
        assert_eq!(list.len(), 3);
        assert_eq!(
            list[2],
            "c2…[cut by hookbox: 7 more contexts (14 bytes) dropped; a rule adds at most 3 (rule_contexts)]"
        );
        let mut none: Vec<String> = vec!["x".into()];
        b.take_list(&mut none, 0, "contexts");
        assert_eq!(none.len(), 1);
        assert!(none[0].starts_with(CUT_MARKER));
    }

    #[test]
    fn replacement_is_bounded_before_it_is_built() {
        let (s, cut) = bounded_replace("a{x}b{x}c", "{x}", "12", 100, Scope::Rule);
        assert_eq!((s.as_str(), cut), ("a12b12c", 0));
        // 8,000 placeholders × 512 KiB would be 4 GB: only the limit is ever written.
        let template = "{x}".repeat(8_000);
        let prompt = "p".repeat(512 * 1024);
        let (s, cut) = bounded_replace(&template, "{x}", &prompt, 1024, Scope::Rule);
        assert!(s.len() < 1024 + 200, "{}", s.len());
        assert!(s.starts_with(&"p".repeat(1024)));
        assert_eq!(cut, 8_000 * 512 * 1024 - 1024);
        assert!(s.ends_with("(rule_text_bytes)]"), "{s}");
        // Multi-byte text is cut on a boundary.
        let (s, _) = bounded_replace("{x}", "{x}", "ééé", 3, Scope::Rule);
        assert!(s.starts_with("é…"), "{s}");
    }

    #[test]
    fn a_huge_count_does_not_overflow() {
        // The arithmetic saturates instead of wrapping into a small "fits".
        let (s, _) = bounded_replace("{x}{x}", "{x}", "abc", 2, Scope::Dispatch);
        assert!(s.starts_with("ab…"), "{s}");
        assert!(s.contains("dispatch_text_bytes"), "{s}");
    }
}
