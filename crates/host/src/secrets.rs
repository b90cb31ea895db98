//! The secret scanner: redacts credentials from everything hookbox records (replay, previews).
//! Hooks print what they like — a shell hook that echoes `env` would leak every key — so every
//! replay string passes through here, cut or full.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

/// Where a token may start. `\b` is not enough: in JSON text a token often follows an escape
/// (`\nghp_…`, `\tAKIA…`: the `n` and `t` are word characters) or an underscore (`x_AKIA…`),
/// and `\b` sees no boundary there. So a token starts at the start of the text, after a
/// character that is not a letter or digit (`_` included), or after a JSON escape (`\n`,
/// `\t`, `\r`, `\b`, `\f`, `\u0022`…). The prefix is kept; only the token (group 1) is
/// redacted. Written `{B}` in [`PATTERNS`].
const BOUNDARY: &str = r"(?:^|\\[nrtbf]|\\u[0-9A-Fa-f]{4}|[^A-Za-z0-9])";

/// (name, pattern, capture group to redact). `{B}` stands for [`BOUNDARY`]; the group is the
/// secret itself, so what precedes it survives.
const PATTERNS: &[(&str, &str, usize)] = &[
    (
        "private_key",
        r"(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z))",
        1,
    ),
    (
        "aws_access_key_id",
        r"{B}((?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[0-9A-Z]{16})",
        1,
    ),
    (
        "aws_secret_access_key",
        r#"(?i)aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})"#,
        1,
    ),
    (
        "github_token",
        r"{B}((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255})",
        1,
    ),
    ("github_pat", r"{B}(github_pat_[A-Za-z0-9_]{22,255})", 1),
    (
        "gitlab_token",
        r"{B}(gl(?:pat|dt|ptt|rt)-[A-Za-z0-9_\-]{20,})",
        1,
    ),
    ("slack_token", r"{B}(xox[abposr]-[A-Za-z0-9-]{10,})", 1),
    (
        "slack_webhook",
        r"(https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+)",
        1,
    ),
    ("anthropic_key", r"{B}(sk-ant-[A-Za-z0-9_\-]{20,})", 1),
    (
        "openai_key",
        r"{B}(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,})",
        1,
    ),
    ("google_api_key", r"{B}(AIza[0-9A-Za-z_\-]{35})", 1),
    (
        "stripe_key",
        r"{B}((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,})",
        1,
    ),
    (
        "jwt",
        r"{B}(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})",
        1,
    ),
    (
        "bearer_token",
        r"(?i){B}bearer\s+([A-Za-z0-9._~+/=\-]{12,})",
        1,
    ),
    (
        "assigned_secret",
        r#"(?i){B}(?:password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)["']?\s*[:=]\s*["']?([^\s"',;\\]{8,})"#,
        1,
    ),
];

/// Literals of which every pattern in [`PATTERNS`] needs one (case ignored, so this is wider
/// than any pattern): a text that holds none holds no secret the patterns would find, and is
/// returned as it is after one scan instead of fifteen. Almost every string a dispatch records
/// (hook names, event fields, short outputs) is such a text; fifteen regex scans of each of them
/// made redaction the largest cost of a replayed dispatch. Keep it in step with [`PATTERNS`]:
/// `every_pattern_needs_a_trigger` checks each pattern's cases.
const TRIGGERS: &str = r"(?i)private key|a(?:kia|sia|gpa|ida|roa|npa|nva|ipa|bia|cca)|secret|gh[pousr]_|github_pat_|gl(?:pat|dt|ptt|rt)-|xox|hooks\.slack\.com|sk-|aiza|[sr]k_(?:live|test)_|eyj|bearer|passw(?:or)?d|api[_-]?key|access[_-]?token|auth[_-]?token";

fn triggers() -> Option<&'static Regex> {
    static TRIGGER: OnceLock<Option<Regex>> = OnceLock::new();
    // A constant tested below; were it ever bad, every text is scanned in full.
    TRIGGER.get_or_init(|| Regex::new(TRIGGERS).ok()).as_ref()
}

struct Compiled {
    name: &'static str,
    re: Regex,
    group: usize,
}

fn compiled() -> &'static [Compiled] {
    static SET: OnceLock<Vec<Compiled>> = OnceLock::new();
    SET.get_or_init(|| {
        PATTERNS
            .iter()
            .filter_map(|(name, pat, group)| {
                // The patterns are constants tested below; a bad one is skipped rather than panicking.
                Regex::new(&pat.replace("{B}", BOUNDARY))
                    .ok()
                    .map(|re| Compiled {
                        name,
                        re,
                        group: *group,
                    })
            })
            .collect()
    })
}

/// Replaces every credential found in `text` with `[REDACTED:<kind>]`.
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    if triggers().is_some_and(|t| !t.is_match(text)) {
        return out;
    }
    for c in compiled() {
        if !c.re.is_match(&out) {
            continue;
        }
        let replaced =
            c.re.replace_all(&out, |caps: &regex::Captures<'_>| {
                let whole = caps.get(0).map(|m| m.as_str()).unwrap_or("");
                match caps.get(c.group) {
                    Some(m) if c.group != 0 => {
                        let start = m.start() - caps.get(0).map(|w| w.start()).unwrap_or(0);
                        format!(
                            "{}[REDACTED:{}]{}",
                            &whole[..start],
                            c.name,
                            &whole[start + m.len()..]
                        )
                    }
                    _ => format!("[REDACTED:{}]", c.name),
                }
            })
            .into_owned();
        out = Cow::Owned(replaced);
    }
    out
}

/// Redacts every string inside a JSON value, keys included.
pub fn redact_json(v: &mut Value) {
    match v {
        Value::String(s) => {
            if let Cow::Owned(r) = redact(s) {
                *s = r;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_json),
        Value::Object(map) => {
            map.values_mut().for_each(redact_json);
            // Keys are rebuilt only when one holds a secret: almost never, and rebuilding
            // allocates every key again.
            if map.keys().any(|k| matches!(redact(k), Cow::Owned(_))) {
                let entries = std::mem::take(map);
                for (k, val) in entries {
                    map.insert(redact(&k).into_owned(), val);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(compiled().len(), PATTERNS.len());
    }

    /// Every pattern: a text it must redact, the secret in it, and a look-alike it must leave
    /// alone (too short, or glued to a word).
    const CASES: &[(&str, &str, &str, &str)] = &[
        // (kind, text, the secret inside it, a look-alike that is not one)
        (
            "private_key",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
            "MIIEow",
            "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA",
        ),
        (
            "aws_access_key_id",
            "key AKIAIOSFODNN7EXAMPLE here",
            "AKIAIOSFODNN7EXAMPLE",
            "key AKIAIOSFODNN7EXAMP and WAKIAIOSFODNN7EXAMPLE",
        ),
        (
            "aws_secret_access_key",
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = wJalrXUtnFEMI",
        ),
        (
            "github_token",
            "token ghp_0123456789abcdefghijABCDEFGHIJ012345",
            "ghp_0123456789abcdefghijABCDEFGHIJ012345",
            "token ghp_0123456789abcdef and Xghp_0123456789abcdefghijABCDEFGHIJ012345",
        ),
        (
            "github_pat",
            "github_pat_11ABCDEFG0123456789abcdefghij",
            "github_pat_11ABCDEFG0123456789abcdefghij",
            "github_pat_short",
        ),
        (
            "gitlab_token",
            "glpat-abcdefghij0123456789",
            "glpat-abcdefghij0123456789",
            "glpat-short and iglpat-abcdefghij0123456789",
        ),
        (
            "slack_token",
            "xoxb-123456789012-abcdefghij",
            "xoxb-123456789012-abcdefghij",
            "xoxb-123 and xoxz-123456789012-abcdefghij",
        ),
        (
            "slack_webhook",
            "post to https://hooks.slack.com/services/T000/B000/XXXXXXXX",
            "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
            "see https://hooks.slack.com/ for docs",
        ),
        (
            "anthropic_key",
            "sk-ant-api03-abcdefghijklmnopqrstuv",
            "sk-ant-api03-abcdefghijklmnopqrstuv",
            "sk-ant-short",
        ),
        (
            "openai_key",
            "OPENAI sk-proj-abcdefghijklmnopqrstuvwx",
            "sk-proj-abcdefghijklmnopqrstuvwx",
            "sk-short and the task-abcdefghijklmnopqrstuvwx",
        ),
        (
            "google_api_key",
            "AIzaSyA-0123456789abcdefghijklmnopqrstu",
            "AIzaSyA-0123456789abcdefghijklmnopqrstu",
            "AIzaSyA-0123456789",
        ),
        (
            "stripe_key",
            "sk_live_0123456789abcdefgh",
            "sk_live_0123456789abcdefgh",
            "sk_live_short and sk_prod_0123456789abcdefgh",
        ),
        (
            "jwt",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            "eyJhbGciOiJIUzI1NiJ9.notajwt",
        ),
        (
            "bearer_token",
            "Authorization: Bearer abcdef.ghijkl.mnopqr",
            "abcdef.ghijkl.mnopqr",
            "Authorization: Bearer short and a forbearer of things",
        ),
        (
            "assigned_secret",
            "password=hunter2hunter2",
            "hunter2hunter2",
            "password=short; the secretary said",
        ),
    ];

    #[test]
    fn every_pattern_has_a_positive_and_a_negative_case() {
        let kinds: Vec<&str> = CASES.iter().map(|c| c.0).collect();
        let names: Vec<&str> = PATTERNS.iter().map(|p| p.0).collect();
        assert_eq!(kinds, names, "one case per pattern, in order");
        for (kind, text, secret, lookalike) in CASES {
            let r = redact(text);
            assert!(r.contains(&format!("[REDACTED:{kind}]")), "{text} -> {r}");
            assert!(!r.contains(secret), "{kind}: {secret} survived in {r}");
            assert_eq!(
                redact(lookalike),
                *lookalike,
                "{kind}: a look-alike was redacted"
            );
        }
    }

    #[test]
    fn tokens_after_json_escapes_and_underscores_are_found() {
        let ghp = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        let akia = "AKIAIOSFODNN7EXAMPLE";
        let ant = "sk-ant-api03-abcdefghijklmnopqrstuv";
        for (text, kind) in [
            (format!(r"line\n{ghp}"), "github_token"),
            (format!(r"col\t{akia}"), "aws_access_key_id"),
            (format!(r#"{{"out": "ok\n{ant}"}}"#), "anthropic_key"),
            (format!("x_{akia}"), "aws_access_key_id"),
            (format!(r"\u0022{ghp}"), "github_token"),
            (format!(r"a\r\n{ghp}"), "github_token"),
            ("my_password=hunter2hunter2".to_owned(), "assigned_secret"),
        ] {
            let r = redact(&text);
            assert!(r.contains(&format!("[REDACTED:{kind}]")), "{text} -> {r}");
            assert!(
                !r.contains(ghp) && !r.contains(akia) && !r.contains(ant),
                "{r}"
            );
        }
        // What precedes the token survives.
        assert_eq!(
            redact(&format!(r"line\n{ghp}")),
            r"line\n[REDACTED:github_token]"
        );
        // The same through serde_json, as replay writes it.
        let line = serde_json::to_string(&format!("out\n{ghp}\t{akia}")).unwrap();
        assert_eq!(
            redact(&line),
            r#""out\n[REDACTED:github_token]\t[REDACTED:aws_access_key_id]""#
        );
        let r = redact("AKIAIOSFODNN7EXAMPLE");
        assert_eq!(r, "[REDACTED:aws_access_key_id]");
    }

    #[test]
    fn every_pattern_needs_a_trigger() {
        assert!(triggers().is_some(), "the trigger pattern compiles");
        let t = triggers().unwrap();
        // Each pattern's positive case, and the cases found after JSON escapes, hold a trigger
        // (otherwise `redact` would skip them; the tests above would then fail too).
        for (kind, text, _, _) in CASES {
            assert!(t.is_match(text), "{kind}: no trigger in {text}");
        }
        // Case does not hide a secret from the trigger where the pattern ignores case.
        for text in [
            "AUTHORIZATION: BEARER abcdef.ghijkl.mnopqr",
            "PASSWORD=hunter2hunter2",
            "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "Api-Key: abcdefgh1234",
            "AccessToken=abcdefgh1234",
        ] {
            assert!(t.is_match(text), "no trigger in {text}");
            assert!(redact(text).contains("[REDACTED:"), "{text}");
        }
        // Ordinary text holds none, so it is scanned once.
        for text in [
            "hooks/noop.wasm",
            "UserPromptSubmit",
            "ls -la && git status",
            "/tmp/x",
        ] {
            assert!(!t.is_match(text), "{text}");
        }
    }

    #[test]
    fn json_values_and_keys_are_redacted_and_clean_ones_kept() {
        let akia = "AKIAIOSFODNN7EXAMPLE";
        let mut v = serde_json::json!({
            "tool": "Bash",
            "nested": [{"out": format!("line\n{akia}")}, 3],
            akia: "a key that is a secret",
        });
        redact_json(&mut v);
        let text = v.to_string();
        assert!(!text.contains(akia), "{text}");
        assert_eq!(v["tool"], "Bash");
        assert_eq!(v["nested"][0]["out"], "line\n[REDACTED:aws_access_key_id]");
        assert_eq!(v["[REDACTED:aws_access_key_id]"], "a key that is a secret");
        assert_eq!(v["nested"][1], 3);
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        let text = "ls -la && git status; echo done";
        assert!(matches!(redact(text), Cow::Borrowed(_)));
    }

    #[test]
    fn truncated_private_key_is_still_redacted() {
        let r = redact("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAA");
        assert_eq!(r, "[REDACTED:private_key]");
    }
}
