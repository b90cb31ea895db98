//! What the host offers every hook: a leveled log and the rule's static `config`.
//!
//! Both are imports of the `hookbox:hook/host` interface. Outside a component (native unit
//! tests) they are wit-bindgen stubs that panic; keep them out of the logic under test, or test
//! [`parse_config`] directly.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::Level;
use crate::bindings::hookbox::hook::host as imports;

/// Writes a line to the host's log, tagged with the rule. The host caps the number of calls per
/// event (`log_calls`); past the cap, lines are dropped, not an error.
pub fn log(level: Level, message: &str) {
    imports::log(level, message);
}

/// [`log`] at [`Level::Trace`].
pub fn trace(message: &str) {
    log(Level::Trace, message);
}

/// [`log`] at [`Level::Debug`].
pub fn debug(message: &str) {
    log(Level::Debug, message);
}

/// [`log`] at [`Level::Info`].
pub fn info(message: &str) {
    log(Level::Info, message);
}

/// [`log`] at [`Level::Warn`].
pub fn warn(message: &str) {
    log(Level::Warn, message);
}

/// [`log`] at [`Level::Error`].
pub fn error(message: &str) {
    log(Level::Error, message);
}

/// The rule's `config` as JSON (`Null` when the rule has none).
pub fn config_json() -> Result<Value, String> {
    serde_json::from_str(&imports::config()).map_err(|e| format!("rule config is not JSON: {e}"))
}

/// The rule's `config`, deserialized into `T`.
///
/// A rule without `config` reads as `{}`, so a `#[serde(default)]` struct gets its defaults
/// instead of an error. The `Err` is ready to return from a hook with `?`.
pub fn config<T: DeserializeOwned>() -> Result<T, String> {
    parse_config(&imports::config())
}

/// [`config`]'s parsing, separate so it can be tested natively: `null` (no config) reads as
/// `{}`, and errors say what was wrong with the rule's config.
pub fn parse_config<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("rule config is not JSON: {e}"))?;
    let value = match value {
        Value::Null => Value::Object(serde_json::Map::new()),
        other => other,
    };
    serde_json::from_value(value).map_err(|e| format!("invalid rule config: {e}"))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(default, deny_unknown_fields)]
    struct Config {
        deny: Vec<String>,
        strict: bool,
    }

    impl Default for Config {
        fn default() -> Self {
            Self {
                deny: vec!["rm -rf /".into()],
                strict: false,
            }
        }
    }

    #[test]
    fn null_config_gives_defaults() {
        assert_eq!(parse_config::<Config>("null"), Ok(Config::default()));
    }

    #[test]
    fn config_fields_override_defaults() {
        assert_eq!(
            parse_config::<Config>(r#"{"strict": true}"#),
            Ok(Config {
                deny: vec!["rm -rf /".into()],
                strict: true
            })
        );
    }

    #[test]
    fn config_errors_name_the_problem() {
        let err = parse_config::<Config>(r#"{"stritc": true}"#).unwrap_err();
        assert!(
            err.starts_with("invalid rule config: unknown field `stritc`"),
            "{err}"
        );
        let err = parse_config::<Config>("{").unwrap_err();
        assert!(err.starts_with("rule config is not JSON"), "{err}");
    }
}
