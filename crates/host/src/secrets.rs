//! The secret scanner: redacts credentials from everything hookbox records (replay, previews).
//! Hooks print what they like — a shell hook that echoes `env` would leak every key — so every
//! replay string passes through here, cut or full.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

/// (name, pattern, capture group to redact — 0 for the whole match).
const PATTERNS: &[(&str, &str, usize)] = &[
    (
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
        0,
    ),
    (
        "aws_access_key_id",
        r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[0-9A-Z]{16}\b",
        0,
    ),
    (
        "aws_secret_access_key",
        r#"(?i)aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})"#,
        1,
    ),
    (
        "github_token",
        r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b",
        0,
    ),
    ("github_pat", r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b", 0),
    (
        "gitlab_token",
        r"\bgl(?:pat|dt|ptt|rt)-[A-Za-z0-9_\-]{20,}",
        0,
    ),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", 0),
    (
        "slack_webhook",
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+",
        0,
    ),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", 0),
    (
        "openai_key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        0,
    ),
    ("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}\b", 0),
    (
        "stripe_key",
        r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b",
        0,
    ),
    (
        "jwt",
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        0,
    ),
    (
        "bearer_token",
        r"(?i)\bbearer\s+([A-Za-z0-9._~+/=\-]{12,})",
        1,
    ),
    (
        "assigned_secret",
        r#"(?i)\b(?:password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)["']?\s*[:=]\s*["']?([^\s"',;]{8,})"#,
        1,
    ),
];

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
                Regex::new(pat).ok().map(|re| Compiled {
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
            let entries = std::mem::take(map);
            for (k, mut val) in entries {
                redact_json(&mut val);
                map.insert(redact(&k).into_owned(), val);
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

    #[test]
    fn redacts_known_credentials() {
        let cases = [
            ("key AKIAIOSFODNN7EXAMPLE here", "aws_access_key_id"),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws_secret_access_key",
            ),
            (
                "token ghp_0123456789abcdefghijABCDEFGHIJ012345",
                "github_token",
            ),
            ("glpat-abcdefghij0123456789", "gitlab_token"),
            ("xoxb-123456789012-abcdefghij", "slack_token"),
            ("sk-ant-api03-abcdefghijklmnopqrstuv", "anthropic_key"),
            ("OPENAI sk-proj-abcdefghijklmnopqrstuvwx", "openai_key"),
            ("Authorization: Bearer abcdef.ghijkl.mnopqr", "bearer_token"),
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
                "jwt",
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
                "private_key",
            ),
            ("password=hunter2hunter2", "assigned_secret"),
        ];
        for (text, kind) in cases {
            let r = redact(text);
            assert!(r.contains(&format!("[REDACTED:{kind}]")), "{text} -> {r}");
        }
        let r = redact("AKIAIOSFODNN7EXAMPLE");
        assert!(!r.contains("AKIAIOSFODNN7EXAMPLE"));
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
