//! What a compiled `JsRegex` matches, pattern by pattern, against what V8 answers.

use super::*;

fn m(p: &str, t: &str) -> bool {
    JsRegex::new(p).unwrap().is_match(t)
}

#[test]
fn unanchored_like_regexp_test() {
    assert!(m("Edit.*", "NotebookEdit"));
    assert!(!m("^Edit.*$", "NotebookEdit"));
    assert!(m("mcp__memory__.*", "mcp__memory__create_entities"));
    assert!(m("^(startup|resume|compact)$", "resume"));
    assert!(m("Notebook.*", "NotebookEdit"));
}

#[test]
fn javascript_semantics_for_classes_and_escapes() {
    assert!(m(r"^\d+$", "123"));
    assert!(!m(r"^\d+$", "١٢٣"), "\\d is ASCII-only in JavaScript");
    assert!(!m(r"^\w+$", "héllo"));
    assert!(m(r"^[\w-]+$", "code-reviewer"));
    assert!(m(r"a\/b", "a/b"));
    assert!(m(r"^\u0041$", "A"));
    assert!(m("[^]", "x"));
    assert!(!m("a[]", "a"));
    assert!(m("[a&&b]", "&"));
    assert!(m(r"(?<v>ab)\k<v>", "abab"));
    assert!(m(r"Bash(?=\()", "Bash(ls)"));
}

#[test]
fn identity_escapes_are_the_character() {
    // Without the `u` flag an escape JavaScript gives no meaning is the character itself;
    // Rust reads most of these as anchors, classes or assertions.
    for (p, yes, no) in [
        (r"^\A$", "A", ""),
        (r"^x\z$", "xz", "x"),
        (r"^\Z$", "Z", ""),
        (r"^\G$", "G", ""),
        (r"^\K$", "K", ""),
        (r"^\a$", "a", "\x07"),
        (r"^\e$", "e", "\x1b"),
        (r"^\pL$", "pL", "x"),
        (r"^\Pc$", "Pc", "x"),
        (r"^\p{L}$", "p{L}", "x"),
        (r"^\H\N\O\R$", "HNOR", "x\n\n\n"),
        (r"^\<\>$", "<>", ""),
        (r"^\#\&\~\-\%$", "#&~-%", ""),
        (r"^\k$", "k", ""),
        (r"^\8\9$", "89", ""),
        (r"^[\A\z\B\-]+$", "AzB-", "x"),
    ] {
        assert!(m(p, yes), "{p} on {yes:?}");
        assert!(!m(p, no), "{p} on {no:?}");
    }
}

#[test]
fn annex_b_escapes_read_as_in_javascript() {
    // `\u` needs exactly four hex digits, else it is `u`.
    assert!(m(r"^\u12$", "u12"));
    assert!(m(r"^\u00e9$", "é"));
    assert!(
        m(r"^\uD83D\uDE00$", "😀"),
        "a surrogate pair is one character"
    );
    assert!(
        JsRegex::new(r"\uD83D").is_err(),
        "a lone surrogate matches no UTF-8"
    );
    assert!(m(r"^\x41\x4$", "Ax4"));
    // `\c` takes a letter; otherwise it is a backslash and `c`.
    assert!(m(r"^\cJ$", "\n"));
    assert!(m(r"^\c1$", "\\c1"));
    assert!(m(r"^\c+$", "\\ccc"), "the quantifier applies to the `c`");
    assert!(m(r"^[\c1]$", "\x11"), "in a class, digits and _ too");
    assert!(m(r"^[\c]+$", "c\\"));
    // Legacy octal.
    assert!(m(r"^\01$", "\x01"));
    assert!(m(r"^\0$", "\0"));
    assert!(m(r"^\08$", "\x008"));
    assert!(m(r"^\101$", "A"));
    assert!(m(r"^\1010$", "A0"));
    assert!(m(r"^\477$", "\x277"));
    assert!(m(r"^[\1-\3]$", "\x02"));
    assert!(m(r"^\1$", "\x01"), "no group: octal");
    assert!(m(r"^(a)\1$", "aa"), "a group: a backreference");
    assert!(m(r"^[\b]$", "\x08"));
}

#[test]
fn braces_are_text_unless_a_quantifier() {
    assert!(!m(r"^a{,2}$", "a"));
    assert!(m(r"^a{,2}$", "a{,2}"));
    assert!(m(r"^a{2}$", "aa"));
    assert!(m(r"^a{2,}$", "aaa"));
    assert!(m(r"^a{1,2}?$", "aa"));
    assert!(m(r"^a{x}}$", "a{x}}"));
    assert!(m(r"^]$", "]"));
    assert!(m("^a{", "a{"));
}

#[test]
fn dot_space_and_word_boundary_as_in_javascript() {
    for c in ["\n", "\r", "\u{2028}", "\u{2029}"] {
        assert!(!m("^.$", c), "{c:?}");
    }
    assert!(m("^.$", "\u{85}"));
    assert!(m("^(?s:.)$", "\r"));
    assert!(m(r"^\s$", "\u{FEFF}"));
    assert!(!m(r"^\s$", "\u{85}"));
    assert!(m(r"^\S$", "\u{85}"));
    assert!(m(r"^[\s]$", "\u{FEFF}"));
    assert!(m(r"^[\S]$", "\u{85}"));
    assert!(!m(r"^[^\s]$", "\u{2028}"));
    assert!(
        m(r"^[\s-a]+$", "- a"),
        "Annex B: a class escape is no range end"
    );
    assert!(m(r"^[a-\d]+$", "a-1"));
    assert!(!m(r"\b", "é"));
    assert!(m(r"\B", "é"));
    assert!(m(r"a\b", "aé"));
    // The same through the backtracking engine.
    assert!(!m(r"(?=.)\b", "é"));
    assert!(m(r"(?=a)a\b", "aé"));
    assert!(m(r"(?=.)\B", "é"));
}

#[test]
fn backreferences_to_groups_that_did_not_take_part_match_empty() {
    assert!(m(r"^(?:(a)|\1b)$", "b"));
    assert!(m(r"(a)|\1b", "b"));
    assert!(m(r"^\1(a)$", "a"), "a forward reference is empty");
    assert!(m(r"^(a)?\1b$", "b"));
    assert!(m(r"^(a)?\1b$", "aab"));
    assert!(!m(r"^(a)?\1b$", "ab"));
    assert!(m(r"^(?<n>a)?\k<n>b$", "b"));
    // What `fancy-regex` would keep and JavaScript clears is refused.
    for p in [
        r"(a\1)",
        r"(?<n>a\k<n>)",
        r"(b)(a|)+\1\2",
        r"(?:(a)|b)+\1",
        r"(?:\1(a))+",
        r"(?:(a)?b)*\1",
    ] {
        let e = JsRegex::new(p).unwrap_err();
        assert!(matches!(e, RegexError::Unsupported { .. }), "{p}: {e}");
        assert!(e.to_string().contains("backreference"), "{e}");
    }
    assert!(m(r"^(.|.)*\1$", "abb"));
    // A quantified lookahead (Annex B) is the assertion once, or nothing.
    assert!(m(r"^(?=a)+a$", "a"));
    assert!(!m(r"^(?=b)+a$", "a"));
    assert!(m(r"^(?=b)*a$", "a"));
    assert!(m(r"^(?=b)?a$", "a"));
}

#[test]
fn class_syntax_rust_reads_differently_is_escaped() {
    assert!(m("^[a[]+$", "a["));
    assert!(m("^[a&&b]+$", "&&"));
    assert!(JsRegex::new("[a--]").is_err(), "a reversed range");
    assert!(m("^[~~]$", "~"));
    assert!(m("^[[:alpha:]]+$", ":]]"), "a class, then `]+`");
    assert!(!m("^[]a]$", "a]"), "`[]` matches nothing");
}

#[test]
fn modifier_groups_are_spelled_out() {
    // `i` without the `u` flag: upper case of UTF-16 units, never non-ASCII to ASCII.
    for (p, t, want) in [
        ("^(?i:s)$", "S", true),
        ("^(?i:s)$", "ſ", false),
        ("^(?i:k)$", "\u{212A}", false),
        ("^(?i:[a-z]+)$", "AbC", true),
        ("^(?i:[^a])$", "A", false),
        (r"^(?i:\w)$", "ſ", false),
        (r"^(?i:\W)$", "ſ", true),
        ("^(?i:σ)$", "ς", true),
        ("^(?i:ß)$", "\u{1E9E}", false),
        ("^(?i:\u{10428})$", "\u{10400}", false),
        ("^(?i:a(?-i:a))$", "AA", false),
        ("^(?i:a(?-i:a))$", "Aa", true),
        // `m`: JavaScript's four line terminators.
        ("(?m:^b)", "a\rb", true),
        ("(?m:a$)", "a\u{2028}", true),
        ("^b", "a\nb", false),
        // `s`: `.` takes line terminators too.
        ("^(?s:.)$", "\u{2028}", true),
        ("^(?s:(?-s:.))$", "\n", false),
    ] {
        // (The `i` answers are V8's, `new RegExp(p, "i")` in Node 20; `regress` differs on
        // `ſ` and on astral letters, which it folds.)
        assert_eq!(m(p, t), want, "{p} on {t:?}");
    }
    let e = JsRegex::new(r"(a)(?i:\1)").unwrap_err();
    assert!(e.to_string().contains("`i` modifier"), "{e}");
}

#[test]
fn invalid_patterns_fail_at_compile_time() {
    let e = JsRegex::new("Bash(").unwrap_err();
    assert!(matches!(e, RegexError::Syntax { .. }), "{e}");
    assert!(e.to_string().contains("Bash("));
    assert!(JsRegex::new("*Bash").is_err());
    assert!(
        JsRegex::new("(?i)bash").is_err(),
        "inline flags are not JavaScript"
    );
}

#[test]
fn huge_patterns_are_refused_by_the_size_limit() {
    // `\S` is a large Unicode class (everything but JavaScript's 25 spaces); 2000 of them
    // would take megabytes. (`\p{L}` is no class here: without the `u` flag it is `p{L}`.)
    let e = JsRegex::new(r"\S{2000}").unwrap_err();
    assert_eq!(
        e,
        RegexError::TooBig {
            pattern: r"\S{2000}".into(),
            limit: REGEX_SIZE_LIMIT
        }
    );
    assert!(e.to_string().contains(r"`\S{2000}` is too big"), "{e}");
    // The same through the backtracking engine (a lookahead sends it there).
    let e = JsRegex::new(r"\S{2000}(?=x)").unwrap_err();
    assert!(matches!(e, RegexError::TooBig { .. }), "{e}");
    // Real matchers fit with room to spare.
    for p in [
        r"\S+",
        r"\p{L}{2000}",
        "^mcp__(github|gitlab|linear)__(create|update)_.*$",
        "Edit.*",
    ] {
        assert!(JsRegex::new(p).unwrap().regular().is_some(), "{p}");
    }
}

#[test]
fn long_patterns_are_quoted_cut() {
    let long = format!("({}", "a".repeat(500));
    let e = JsRegex::new(&long).unwrap_err();
    let RegexError::Syntax { pattern, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(pattern.chars().count(), QUOTE_CHARS + 1, "{pattern}");
    assert!(pattern.ends_with('…'));
}

#[test]
fn backtracking_is_paid_from_the_budget() {
    let re = JsRegex::new(r"(.|.)*\1Z").unwrap();
    assert!(re.is_backtracking());
    let mut b = MatchBudget::new(1_000_000);
    // 2^17 ways to split `run_shell_command`: the quick attempt and the full one give up.
    assert_eq!(re.is_match_within("run_shell_command", &mut b), None);
    assert_eq!(b.spent(), (QUICK_BACKTRACK_LIMIT + BACKTRACK_LIMIT) as u64);
    // A short subject is decided by the quick attempt alone.
    assert_eq!(re.is_match_within("Bash", &mut b), Some(false));
    assert_eq!(
        b.spent(),
        (2 * QUICK_BACKTRACK_LIMIT + BACKTRACK_LIMIT) as u64
    );
    // A budget that cannot pay for an attempt refuses to run it.
    let mut poor = MatchBudget::new(10);
    assert_eq!(re.is_match_within("Bash", &mut poor), None);
    assert!(poor.exhausted());
    assert_eq!(poor.spent(), 0);
    // Regular patterns are free.
    let re = JsRegex::new("Edit.*").unwrap();
    assert_eq!(re.is_match_within("NotebookEdit", &mut poor), Some(true));
    assert_eq!(poor.spent(), 0);
}

#[test]
fn catastrophic_backtracking_is_bounded() {
    // With a backreference the whole pattern runs on the backtracking VM.
    let re = JsRegex::new(r"^(a+)+\1$").unwrap();
    let evil = format!("{}!", "a".repeat(40));
    assert!(!re.is_match(&evil));
    // Regular patterns run on the linear engine.
    let re = JsRegex::new("^(a+)+$").unwrap();
    assert!(!re.is_match(&evil));
}
