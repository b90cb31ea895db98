//! Glob patterns for object-matcher values: `*` is any run of characters, `?` is one character,
//! everything else is literal. Whole-string, case-sensitive. Linear-ish: no backtracking blow-up.

/// Whether `text` matches the glob `pattern` as a whole.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    // Position of the last `*` seen and the text position it is currently matched up to.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) && p[pi] != '*' {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs() {
        assert!(glob_match("Bash", "Bash"));
        assert!(!glob_match("Bash", "BashX"));
        assert!(glob_match("*", ""));
        assert!(glob_match("mcp__*", "mcp__github__create_issue"));
        assert!(glob_match("*__create_*", "mcp__github__create_issue"));
        assert!(glob_match("Ed?t", "Edit"));
        assert!(!glob_match("Ed?t", "Edt"));
        assert!(!glob_match("a*b", "acbd"));
        assert!(glob_match(&"*a".repeat(50), &"a".repeat(200)));
    }
}
