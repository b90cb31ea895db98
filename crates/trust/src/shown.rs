//! Untrusted text made safe to show for approval: a plugin's command, label, path or reason
//! printed on an approval screen (`trust add/show/diff`, `install --approve`) or in a warning
//! naming a rule must read as what it is. A control character (an escape sequence that moves
//! the cursor or rewrites the screen, a carriage return, a newline) or an invisible format
//! character (Unicode `Cf`: bidi overrides U+202A–U+202E and isolates U+2066–U+2069, which make
//! `rm -rf ~ #` read backwards; zero-width U+200B–U+200F; U+FEFF; tag characters …) could make
//! a reviewer approve something other than what they read. Each is written as its escape
//! instead (`\u{202e}`, `\n`), so nothing is hidden and nothing is lost.

use std::borrow::Cow;

/// The Unicode `Cf` (format) characters, as inclusive ranges (Unicode 16.0).
const FORMAT: &[(char, char)] = &[
    ('\u{00AD}', '\u{00AD}'),
    ('\u{0600}', '\u{0605}'),
    ('\u{061C}', '\u{061C}'),
    ('\u{06DD}', '\u{06DD}'),
    ('\u{070F}', '\u{070F}'),
    ('\u{0890}', '\u{0891}'),
    ('\u{08E2}', '\u{08E2}'),
    ('\u{180E}', '\u{180E}'),
    ('\u{200B}', '\u{200F}'),
    ('\u{202A}', '\u{202E}'),
    ('\u{2060}', '\u{2064}'),
    ('\u{2066}', '\u{206F}'),
    ('\u{FEFF}', '\u{FEFF}'),
    ('\u{FFF9}', '\u{FFFB}'),
    ('\u{110BD}', '\u{110BD}'),
    ('\u{110CD}', '\u{110CD}'),
    ('\u{13430}', '\u{1343F}'),
    ('\u{1BCA0}', '\u{1BCA3}'),
    ('\u{1D173}', '\u{1D17A}'),
    ('\u{E0001}', '\u{E0001}'),
    ('\u{E0020}', '\u{E007F}'),
];

/// Whether `c` is written as an escape when shown: a control character (`Cc`), a format
/// character (`Cf`), or a line or paragraph separator (U+2028, U+2029).
pub fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}')
        || FORMAT.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
}

/// `text` with every character [`needs_escape`] says so written as its escape: `\n`, `\r`,
/// `\t`, `\\` before one, and `\u{…}` for the rest (`\u{1b}`, `\u{202e}`). Borrowed when there
/// is nothing to escape. A backslash is doubled only in text that has something escaped, so
/// `C:\x` reads as written and `\u{202e}` written literally cannot pass for an escaped one
/// beside a real one.
pub fn escape_shown(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\\' => out.push_str("\\\\"),
            c if needs_escape(c) => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_zero_width_and_controls_are_escaped() {
        // "rm -rf ~ #" made to read as something else by a right-to-left override.
        assert_eq!(
            escape_shown("echo safe \u{202e}~ fr- mr\u{202c}"),
            "echo safe \\u{202e}~ fr- mr\\u{202c}"
        );
        for c in [
            '\u{202a}',
            '\u{202b}',
            '\u{202d}',
            '\u{2066}',
            '\u{2067}',
            '\u{2068}',
            '\u{2069}',
            '\u{200b}',
            '\u{200c}',
            '\u{200d}',
            '\u{200e}',
            '\u{200f}',
            '\u{feff}',
            '\u{2060}',
            '\u{00ad}',
            '\u{061c}',
            '\u{e0041}',
            '\u{2028}',
            '\u{2029}',
            '\u{1b}',
            '\u{7}',
            '\u{9b}',
            '\u{85}',
            '\u{0}',
            '\u{7f}',
        ] {
            let shown = escape_shown(&format!("a{c}b")).into_owned();
            assert_eq!(shown, format!("a{}b", c.escape_unicode()), "{c:?}");
            assert!(!shown.contains(c));
        }
        assert_eq!(escape_shown("a\nb\r\tc"), "a\\nb\\r\\tc");
        // The escape of a real one cannot be told apart from its spelling unless backslashes
        // are doubled where anything is escaped.
        assert_eq!(escape_shown("\\u{202e}\u{202e}"), "\\\\u{202e}\\u{202e}");
    }

    #[test]
    fn plain_text_is_borrowed_and_unchanged() {
        for plain in [
            "\"${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh\" --strict",
            "C:\\tools\\x",
            "naïve café — ✓ 日本語 עברית",
        ] {
            assert!(matches!(escape_shown(plain), Cow::Borrowed(_)), "{plain}");
        }
    }
}
