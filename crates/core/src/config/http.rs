//! The `http` handler's own fields (Claude Code's, SPEC §4.2a): `url` (required: an absolute
//! `http` or `https` URL), `headers` (an object of strings; `$VAR` / `${VAR}` in values expand
//! at run time, only for names in `allowedEnvVars`), `allowedEnvVars` (a list of names). An
//! http hook reaches the network, so its block is strict like a wasm block: a bad field is an
//! error, not a warning. The timeout, already checked, falls back to the dialect's default.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::document::{Ctx, describe};
use super::span::JsonPath;
use super::timeout;
use crate::event::EventName;
use crate::rule::HttpSpec;

/// Why a `url` cannot be used.
fn url_problem(raw: &str) -> Option<String> {
    if raw.contains("${") || (raw.contains('$') && !raw.contains("://")) {
        return Some(
            "it names a variable, and Claude Code expands variables (those in allowedEnvVars) only in header values, never in the URL".to_owned(),
        );
    }
    match url::Url::parse(raw) {
        Err(e) => Some(format!("it does not parse as a URL ({e})")),
        Ok(u) if !matches!(u.scheme(), "http" | "https") => Some(format!(
            "its scheme is '{}'; http hooks POST to http:// or https:// URLs",
            u.scheme()
        )),
        Ok(u) if u.host_str().is_none_or(str::is_empty) => Some("it names no host".to_owned()),
        Ok(_) => None,
    }
}

/// Parses an http handler's own fields.
pub(crate) fn parse_http(
    ctx: &mut Ctx<'_>,
    event: EventName,
    obj: &Map<String, Value>,
    path: &JsonPath,
    timeout: Option<f64>,
) -> Option<HttpSpec> {
    let url = match obj.get("url") {
        Some(Value::String(s)) => {
            match url_problem(s) {
                None => s.clone(),
                Some(why) => {
                    ctx.reject(
                    &path.key("url"),
                    format!(
                        "'url' {} cannot be used: {why} — skipped.",
                        Value::String(s.clone())
                    ),
                    Some("write an absolute URL such as \"https://hooks.example.com/pre-tool-use\"".to_owned()),
                );
                    return None;
                }
            }
        }
        Some(other) => {
            ctx.reject(
                &path.key("url"),
                format!(
                    "'url' must be a string, found {} — skipped.",
                    describe(other)
                ),
                None,
            );
            return None;
        }
        None => {
            ctx.reject(
                path,
                format!("Hook type 'http' under '{event}' has no 'url' — skipped."),
                Some("add \"url\": \"https://…\" (the payload is POSTed there)".to_owned()),
            );
            return None;
        }
    };
    let headers = match obj.get("headers") {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(map)) => {
            let mut headers = BTreeMap::new();
            for (name, v) in map {
                let Value::String(v) = v else {
                    ctx.reject(
                        &path.key("headers").key(name),
                        format!(
                            "header '{name}' must be a string, found {} — skipped.",
                            describe(v)
                        ),
                        None,
                    );
                    return None;
                };
                headers.insert(name.clone(), v.clone());
            }
            headers
        }
        Some(other) => {
            ctx.reject(
                &path.key("headers"),
                format!(
                    "'headers' must be an object of strings, found {} — skipped.",
                    describe(other)
                ),
                Some("write \"headers\": {\"Authorization\": \"Bearer $TOKEN\"}".to_owned()),
            );
            return None;
        }
    };
    let allowed_env_vars = match obj.get("allowedEnvVars") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => {
            let mut names = Vec::with_capacity(items.len());
            for (i, v) in items.iter().enumerate() {
                let Value::String(name) = v else {
                    ctx.reject(
                        &path.key("allowedEnvVars").index(i),
                        format!(
                            "'allowedEnvVars' must be a list of variable names, found {} — skipped.",
                            describe(v)
                        ),
                        None,
                    );
                    return None;
                };
                names.push(name.clone());
            }
            names
        }
        Some(other) => {
            ctx.reject(
                &path.key("allowedEnvVars"),
                format!(
                    "'allowedEnvVars' must be a list of variable names, found {} — skipped.",
                    describe(other)
                ),
                Some("write \"allowedEnvVars\": [\"TOKEN\"]".to_owned()),
            );
            return None;
        }
    };
    Some(HttpSpec {
        url,
        headers,
        allowed_env_vars,
        timeout_secs: timeout.unwrap_or_else(|| timeout::default_secs(ctx, event)),
    })
}

#[cfg(test)]
mod tests {
    use super::url_problem;

    #[test]
    fn urls() {
        assert_eq!(url_problem("https://hooks.example.com/x?y=1"), None);
        assert_eq!(url_problem("http://127.0.0.1:8080/hook"), None);
        assert!(
            url_problem("ftp://example.com")
                .unwrap()
                .contains("scheme is 'ftp'")
        );
        assert!(
            url_problem("hooks.example.com/x")
                .unwrap()
                .contains("does not parse")
        );
        for raw in [
            "http://localhost:${PORT}/x",
            "${ABS_BASE_URL}/v1/hooks",
            "$BASE/hook",
        ] {
            let why = url_problem(raw).unwrap();
            assert!(why.contains("only in header values"), "{raw}: {why}");
        }
        assert!(
            url_problem("file:///etc/passwd")
                .unwrap()
                .contains("scheme is 'file'")
        );
    }
}
