//! `${VAR}` placeholders in a hook's command text and `args`, as Claude Code substitutes them.

use std::borrow::Cow;

/// Replaces each `${NAME}` in `text` whose `NAME` is a key of `vars` with its value.
///
/// Only the braced form is substituted, as in Claude Code: `$NAME` and unknown `${OTHER}` are
/// left untouched, so in shell form the shell still expands them from the environment. An
/// unclosed `${` is kept as written. Values are inserted verbatim, without quoting: a path with
/// spaces needs quotes in the command text (`sh "${CLAUDE_PLUGIN_ROOT}/x.sh"`), as in Claude Code.
pub fn substitute<'a>(text: &'a str, vars: &[(&str, &str)]) -> Cow<'a, str> {
    if !text.contains("${") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            // No closing brace anywhere after: nothing more can be a placeholder.
            out.push_str(&rest[start..]);
            return Cow::Owned(out);
        };
        let name = &after[..end];
        match vars.iter().find(|(k, _)| *k == name) {
            Some((_, value)) => out.push_str(value),
            None => out.push_str(&rest[start..start + 2 + end + 1]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const VARS: &[(&str, &str)] = &[("CLAUDE_PLUGIN_ROOT", "/p/root"), ("PLUGIN_DATA", "/d")];

    #[test]
    fn known_braced_names_are_replaced_everywhere() {
        assert_eq!(
            substitute("${CLAUDE_PLUGIN_ROOT}/hook.sh", VARS),
            "/p/root/hook.sh"
        );
        assert_eq!(
            substitute(
                "sh \"${CLAUDE_PLUGIN_ROOT}/a.sh\" ${PLUGIN_DATA} ${PLUGIN_DATA}",
                VARS
            ),
            "sh \"/p/root/a.sh\" /d /d"
        );
    }

    #[test]
    fn unbraced_and_unknown_are_left_for_the_shell() {
        assert_eq!(
            substitute("$CLAUDE_PLUGIN_ROOT/x", VARS),
            "$CLAUDE_PLUGIN_ROOT/x"
        );
        assert_eq!(
            substitute("${HOME}/${CLAUDE_PLUGIN_ROOT}", VARS),
            "${HOME}//p/root"
        );
        assert_eq!(substitute("${PLUGIN_DATA:-x}", VARS), "${PLUGIN_DATA:-x}");
        assert_eq!(substitute("${}", VARS), "${}");
    }

    #[test]
    fn unclosed_and_odd_text_is_kept() {
        assert_eq!(substitute("echo ${PLUGIN_DATA", VARS), "echo ${PLUGIN_DATA");
        assert_eq!(substitute("a ${PLUGIN_DATA} ${", VARS), "a /d ${");
        assert_eq!(substitute("$$ ${ }", VARS), "$$ ${ }");
        assert_eq!(substitute("é${PLUGIN_DATA}ü", VARS), "é/dü");
    }

    #[test]
    fn no_placeholder_borrows() {
        assert!(matches!(substitute("echo hi", VARS), Cow::Borrowed(_)));
    }

    #[test]
    fn a_value_is_not_substituted_again() {
        let vars = [("A", "${B}"), ("B", "no")];
        assert_eq!(substitute("${A}", &vars), "${B}");
    }
}
