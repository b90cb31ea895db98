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
    /// [`DEFAULT_RULE_TEXT_BYTES`] (256 KiB). Reasons come first, then the system message and
    /// warnings, contexts last, so a long context never cuts a deny's reason or the note that
    /// its output was truncated. A cut keeps 512 bytes of the share for its own notes, so a
    /// cut answer is within the limit, markers and all.
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

/// What a cut keeps of a rule's share for the notes it adds (the list notes and the warning),
/// so that a cut effect is within its limit, markers and all — and cutting it again changes
/// nothing.
pub(crate) const NOTE_RESERVE: usize = 512;

/// A byte budget that strings are cut to, in the order they are offered: those that fit are
/// kept whole, the first that does not is cut (its marker counted in the budget), and every
/// later one is emptied (a list's are dropped, with a note saying how many).
#[derive(Debug)]
pub(crate) struct Budget {
    remaining: usize,
    limit: usize,
    scope: Scope,
    /// Whether a string has been cut: the budget is spent.
    exhausted: bool,
    /// Bytes cut so far.
    pub(crate) cut: usize,
}

impl Budget {
    /// A budget of `limit` bytes.
    pub(crate) fn new(limit: usize, scope: Scope) -> Budget {
        Budget::with_remaining(limit, limit, scope)
    }

    /// A budget of `remaining` bytes, reported as cut by `limit` of `scope`.
    pub(crate) fn with_remaining(remaining: usize, limit: usize, scope: Scope) -> Budget {
        Budget {
            remaining,
            limit,
            scope,
            exhausted: false,
            cut: 0,
        }
    }

    /// Sets [`NOTE_RESERVE`] bytes aside for the notes of a cut.
    pub(crate) fn reserve_notes(&mut self) {
        self.remaining = self.remaining.saturating_sub(NOTE_RESERVE);
    }

    /// Pays for `s`: kept whole if it fits, else cut to what is left and marked; once the
    /// budget is spent, emptied.
    pub(crate) fn take(&mut self, s: &mut String) {
        if self.exhausted {
            self.cut += s.len();
            s.clear();
            return;
        }
        if s.len() <= self.remaining {
            self.remaining -= s.len();
            return;
        }
        // The marker is counted: its length for the largest possible cut bounds the real one.
        let room = self.remaining.saturating_sub(self.marker(s.len()).len());
        let keep = floor_char_boundary(s, room);
        let cut = s.len() - keep;
        s.truncate(keep);
        s.push_str(&self.marker(cut));
        self.cut += cut;
        self.remaining = self.remaining.saturating_sub(s.len());
        self.exhausted = true;
    }

    /// Pays for an optional string.
    pub(crate) fn take_opt(&mut self, s: &mut Option<String>) {
        if let Some(s) = s {
            self.take(s);
        }
    }

    /// Pays for a list, keeping at most `max_entries` of it: entries past the count, or past
    /// the point where the budget is spent, are dropped, and the last kept one says how many.
    pub(crate) fn take_list(&mut self, list: &mut Vec<String>, max_entries: usize, noun: &str) {
        let mut kept = 0;
        while kept < list.len() && kept < max_entries && !self.exhausted {
            self.take(&mut list[kept]);
            kept += 1;
        }
        let dropped_n = list.len() - kept;
        if dropped_n == 0 {
            return;
        }
        let dropped: usize = list[kept..].iter().map(String::len).sum();
        list.truncate(kept);
        self.cut += dropped;
        let why = if self.exhausted {
            format!(
                "{} {} bytes ({})",
                self.scope.what(),
                self.limit,
                self.scope.setting()
            )
        } else {
            format!("a rule adds at most {max_entries} (rule_contexts)")
        };
        let note = format!("{CUT_MARKER}{dropped_n} more {noun} ({dropped} bytes) dropped; {why}]");
        match list.last_mut() {
            Some(last) => last.push_str(&note),
            None => list.push(note),
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
/// is computed first, and a result that would be longer is written only up to what fits with
/// its marker and [`NOTE_RESERVE`] (for the warning that follows it) — the long string is never
/// allocated. Returns the text and the bytes cut.
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
    let budget = Budget::new(max, scope);
    let room = max
        .saturating_sub(NOTE_RESERVE)
        .saturating_sub(budget.marker(full).len());
    let mut out = String::with_capacity(room + budget.marker(full).len());
    let mut pieces = template.split(needle).peekable();
    while let Some(piece) = pieces.next() {
        if !push_within(&mut out, piece, room) {
            break;
        }
        if pieces.peek().is_some() && !push_within(&mut out, with, room) {
            break;
        }
    }
    let cut = full.saturating_sub(out.len());
    out.push_str(&budget.marker(cut));
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

    const RULE: &str = "a rule's text is capped at";

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
    fn text_over_the_budget_is_cut_at_a_char_boundary_and_marked_within_the_budget() {
        let mut b = Budget::new(200, Scope::Rule);
        let mut s = "é".repeat(1000); // 2,000 bytes
        b.take(&mut s);
        assert!(s.len() <= 200, "{}", s.len());
        let (kept, marker) = s.split_at(s.find(CUT_MARKER).unwrap());
        assert!(kept.chars().all(|c| c == 'é'));
        assert_eq!(
            marker,
            format!(
                "…[cut by hookbox: {} more bytes; {RULE} 200 bytes (rule_text_bytes)]",
                2000 - kept.len()
            )
        );
        // Once spent, what follows is emptied, and counted.
        let mut t = "later".to_owned();
        b.take(&mut t);
        assert_eq!(t, "");
        assert_eq!(b.cut, 2000 - kept.len() + 5);
        assert_eq!(
            b.warning(),
            Some(format!(
                "{} bytes of this hook's text were cut: {RULE} 200 bytes (rule_text_bytes)",
                b.cut
            ))
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
        // Past the budget, the rest of a list is dropped with one note.
        let mut b = Budget::new(300, Scope::Dispatch);
        let mut list: Vec<String> = (0..100).map(|_| "x".repeat(100)).collect();
        b.take_list(&mut list, 1000, "contexts");
        // Three fit whole, the fourth is cut (to its marker), the rest are dropped.
        assert_eq!(list.len(), 4);
        assert!(list[3].starts_with(CUT_MARKER), "{}", list[3]);
        assert!(
            list[3].ends_with(
                "96 more contexts (9600 bytes) dropped; a dispatch's text is capped at 300 bytes (dispatch_text_bytes)]"
            ),
            "{}",
            list[3]
        );
    }

    #[test]
    fn replacement_is_bounded_before_it_is_built() {
        let (s, cut) = bounded_replace("a{x}b{x}c", "{x}", "12", 100, Scope::Rule);
        assert_eq!((s.as_str(), cut), ("a12b12c", 0));
        // 8,000 placeholders × 512 KiB would be 4 GB: only the limit is ever written.
        let template = "{x}".repeat(8_000);
        let prompt = "p".repeat(512 * 1024);
        let (s, cut) = bounded_replace(&template, "{x}", &prompt, 1024, Scope::Rule);
        // Room is left for the warning that follows the text.
        assert!(s.len() <= 1024 - NOTE_RESERVE, "{}", s.len());
        assert!(s.starts_with(&"p".repeat(400)));
        assert_eq!(cut, 8_000 * 512 * 1024 - s.find(CUT_MARKER).unwrap());
        assert!(s.ends_with("(rule_text_bytes)]"), "{s}");
        // Multi-byte text is cut on a boundary.
        let (s, _) = bounded_replace("{x}", "{x}", &"é".repeat(1000), 1000, Scope::Rule);
        assert!(s.starts_with('é') && s.contains("é…[cut by hookbox"), "{s}");
    }

    #[test]
    fn a_huge_count_does_not_overflow() {
        // The arithmetic saturates instead of wrapping into a small "fits".
        let (s, _) = bounded_replace("{x}{x}", "{x}", &"abc".repeat(500), 2000, Scope::Dispatch);
        assert!(s.starts_with("abc"), "{s}");
        assert!(s.contains("dispatch_text_bytes"), "{s}");
    }
}
