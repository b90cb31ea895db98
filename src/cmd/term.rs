//! Text that hooks chose, made safe for a terminal: a hook's context, reason or name could carry
//! escape sequences (an OSC 52 clipboard write, cursor movement, a title change) that a terminal
//! would act on. They are stripped whether stdout is a terminal or not; our own colours are
//! added after.

use std::borrow::Cow;

/// `text` without ANSI escape sequences and without control characters other than newline and
/// tab.
pub(crate) fn untrusted(text: &str) -> Cow<'_, str> {
    if !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Cow::Borrowed(text);
    }
    let stripped = anstream::adapter::strip_str(text).to_string();
    Cow::Owned(
        stripped
            .chars()
            .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_controls_are_removed() {
        let osc52 = "before\u{1b}]52;c;cm0gLXJmIH4K\u{7}after";
        let cleaned = untrusted(osc52);
        assert!(
            !cleaned.contains('\u{1b}') && !cleaned.contains('\u{7}'),
            "{cleaned:?}"
        );
        assert!(
            cleaned.starts_with("before") && cleaned.ends_with("after"),
            "{cleaned:?}"
        );
        let cursor = "x\u{1b}[2J\u{1b}[Hy\u{9b}z";
        assert_eq!(untrusted(cursor), "xyz");
        assert!(matches!(untrusted("plain\ttext\n"), Cow::Borrowed(_)));
    }
}
