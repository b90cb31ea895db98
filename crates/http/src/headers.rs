//! The request headers: hookbox's own (`Content-Type`, `User-Agent`, …) and the rule's, whose
//! values expand `$VAR` / `${VAR}` only for names in `allowedEnvVars` (Claude Code's rule: any
//! other reference expands to the empty string, so a hooks file cannot read the environment
//! by naming a variable). A credential of the shared deny-list
//! ([`hookbox_core::credentials::CREDENTIAL_ENV`]: model providers' keys, cloud, forge and
//! registry credentials) expands to the empty string too even when `allowedEnvVars` lists it —
//! `allowedEnvVars` is the plugin's wish, and a plugin must not obtain the agent's model key by
//! asking — unless the user's own policy names it ([`crate::HttpPolicy::credential_env`]).

use std::collections::BTreeMap;

use hookbox_core::credentials::is_credential_env;
use hyper::header::{HeaderName, HeaderValue};

use crate::error::HttpError;

/// Headers hookbox sets itself: a rule's value for one of them is skipped (with a note), since
/// they describe the connection and the body, which are hookbox's to send.
const RESERVED: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
];

/// The rule's headers, ready to send, and notes about what was skipped or emptied.
#[derive(Debug, Default)]
pub(crate) struct RuleHeaders {
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    pub(crate) notes: Vec<String>,
}

/// Expands and validates the rule's `headers`: `$VAR` reads `env` for names in `allowed` (the
/// rule's `allowedEnvVars`) that are not credentials, or that `credentials` (the policy's
/// `credential_env`) names exactly; any other reference is sent empty, with a note.
///
/// # Errors
/// [`HttpError::BadHeader`] for a name that is not a valid header name, or a value that holds
/// a control character (CR, LF, NUL…) once expanded; the value itself is not quoted, since it
/// may hold a secret from the environment.
pub(crate) fn rule_headers(
    headers: &BTreeMap<String, String>,
    allowed: &[String],
    credentials: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<RuleHeaders, HttpError> {
    let mut out = RuleHeaders::default();
    for (name, value) in headers {
        let header =
            HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| HttpError::BadHeader {
                name: name.clone(),
                reason: "not a valid header name".into(),
            })?;
        if RESERVED.contains(&header.as_str()) {
            out.notes.push(format!(
                "header `{name}` was not sent: hookbox sets it from the URL and the body"
            ));
            continue;
        }
        let expanded = expand(value, |var| {
            if !allowed.iter().any(|a| a == var) {
                out.notes.push(format!(
                    "header `{name}`: `${var}` is not in allowedEnvVars, so it was sent empty"
                ));
                return String::new();
            }
            if is_credential_env(var) && !credentials.iter().any(|c| c == var) {
                out.notes.push(format!(
                    "header `{name}`: `${var}` is a provider or cloud credential, which hookbox \
                     keeps from hooks although allowedEnvVars lists it, so it was sent empty \
                     (the host's http policy must name it in `credential_env` to send it)"
                ));
                return String::new();
            }
            env(var).unwrap_or_else(|| {
                out.notes.push(format!(
                    "header `{name}`: `${var}` is not set, so it was sent empty"
                ));
                String::new()
            })
        });
        let value = HeaderValue::from_str(&expanded).map_err(|_| HttpError::BadHeader {
            name: name.clone(),
            reason: "its value, once `$VAR`s are expanded, holds a control character (CR, LF, \
                     NUL, …) or a non-visible byte"
                .into(),
        })?;
        out.headers.push((header, value));
    }
    Ok(out)
}

/// Replaces `$NAME` and `${NAME}` (NAME = a letter or `_`, then letters, digits, `_`) with
/// `lookup(NAME)`. Anything else, a lone `$` or an unclosed `${`, is kept as written.
pub(crate) fn expand(text: &str, mut lookup: impl FnMut(&str) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, consumed) = match after.strip_prefix('{') {
            Some(inner) => match inner.find('}') {
                Some(end) if is_name(&inner[..end]) => (&inner[..end], end + 2),
                _ => ("", 0),
            },
            None => {
                let len = name_len(after);
                (&after[..len], len)
            }
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
        } else {
            out.push_str(&lookup(name));
            rest = &after[consumed..];
        }
    }
    out.push_str(rest);
    out
}

/// Length of the variable name at the start of `s` (0 when there is none).
fn name_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    if !bytes
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
    {
        return 0;
    }
    bytes
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count()
}

fn is_name(s: &str) -> bool {
    !s.is_empty() && name_len(s) == s.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("t0k".into()),
            "USER_ID" => Some("42".into()),
            "EVIL" => Some("a\r\nX-Injected: 1".into()),
            "ANTHROPIC_API_KEY" => Some("sk-ant-secret".into()),
            "AWS_SECRET_ACCESS_KEY" => Some("aws-secret".into()),
            _ => None,
        }
    }

    fn upper(name: &str) -> String {
        format!("<{name}>")
    }

    #[test]
    fn both_spellings_expand_and_the_rest_is_kept() {
        assert_eq!(expand("Bearer $TOKEN", upper), "Bearer <TOKEN>");
        assert_eq!(expand("${TOKEN}x", upper), "<TOKEN>x");
        assert_eq!(expand("$TOKEN.$USER_ID", upper), "<TOKEN>.<USER_ID>");
        assert_eq!(expand("cost: $5 and $", upper), "cost: $5 and $");
        assert_eq!(expand("${unclosed", upper), "${unclosed");
        assert_eq!(expand("${1BAD}", upper), "${1BAD}");
        assert_eq!(expand("$$TOKEN", upper), "$<TOKEN>");
        assert_eq!(expand("é$TOKEN€", upper), "é<TOKEN>€");
    }

    #[test]
    fn only_listed_variables_are_read() {
        let headers = BTreeMap::from([
            ("Authorization".to_owned(), "Bearer $TOKEN".to_owned()),
            ("X-User".to_owned(), "${USER_ID}-$MISSING".to_owned()),
        ]);
        let allowed = vec!["TOKEN".to_owned(), "MISSING".to_owned()];
        let built = rule_headers(&headers, &allowed, &[], &env).unwrap();
        let sent: Vec<(String, String)> = built
            .headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_owned()))
            .collect();
        assert_eq!(
            sent,
            [
                ("authorization".to_owned(), "Bearer t0k".to_owned()),
                ("x-user".to_owned(), "-".to_owned())
            ]
        );
        assert_eq!(
            built.notes,
            [
                "header `X-User`: `$USER_ID` is not in allowedEnvVars, so it was sent empty",
                "header `X-User`: `$MISSING` is not set, so it was sent empty"
            ]
        );
    }

    #[test]
    fn credentials_are_not_expanded_unless_the_policy_names_them() {
        // Issue 16: a plugin listing the agent's model key in allowedEnvVars received it.
        let headers = BTreeMap::from([
            ("X-Key".to_owned(), "$ANTHROPIC_API_KEY".to_owned()),
            ("X-Aws".to_owned(), "${AWS_SECRET_ACCESS_KEY}".to_owned()),
            ("Authorization".to_owned(), "Bearer $TOKEN".to_owned()),
        ]);
        let allowed: Vec<String> = ["ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "TOKEN"]
            .map(str::to_owned)
            .into();
        let sent = |credentials: &[String]| {
            let built = rule_headers(&headers, &allowed, credentials, &env).unwrap();
            let values: BTreeMap<String, String> = built
                .headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_owned()))
                .collect();
            (values, built.notes)
        };
        let (values, notes) = sent(&[]);
        assert_eq!(values["x-key"], "");
        assert_eq!(values["x-aws"], "");
        assert_eq!(values["authorization"], "Bearer t0k");
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes[0].contains("`$AWS_SECRET_ACCESS_KEY` is a provider or cloud credential")
                && notes[0].contains("credential_env"),
            "{notes:?}"
        );
        // The user's own policy names one: that one, and only that one, is sent.
        let (values, notes) = sent(&["ANTHROPIC_API_KEY".to_owned()]);
        assert_eq!(values["x-key"], "sk-ant-secret");
        assert_eq!(values["x-aws"], "");
        assert_eq!(notes.len(), 1, "{notes:?}");
        // A glob or another spelling is not a name: nothing is reopened by it.
        let (values, _) = sent(&["*".to_owned(), "anthropic_api_key".to_owned()]);
        assert_eq!(values["x-key"], "");
    }

    #[test]
    fn reserved_headers_are_skipped_and_bad_ones_refused() {
        let headers = BTreeMap::from([("Host".to_owned(), "evil.example".to_owned())]);
        let built = rule_headers(&headers, &[], &[], &env).unwrap();
        assert!(built.headers.is_empty());
        assert!(built.notes[0].contains("`Host` was not sent"));

        let headers = BTreeMap::from([("X-Inject".to_owned(), "$EVIL".to_owned())]);
        let err = rule_headers(&headers, &["EVIL".to_owned()], &[], &env).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("`X-Inject`") && text.contains("control character"),
            "{text}"
        );
        assert!(
            !text.contains("Injected"),
            "the value must not be quoted: {text}"
        );

        let headers = BTreeMap::from([("Bad Name".to_owned(), "x".to_owned())]);
        let err = rule_headers(&headers, &[], &[], &env).unwrap_err();
        assert!(err.to_string().contains("`Bad Name`"), "{err}");
    }
}
