//! Durations in configuration files (`tenant.toml`, `serve.toml`): a number of seconds read
//! straight into a [`Duration`] by a deserializer that refuses what would misbehave later — a
//! negative, NaN or infinite number, and anything over [`MAX_CONFIG_SECS`] (time arithmetic
//! near 1e19 s overflows and panics) — so a bad value is a parse error naming its file, line and
//! key, never a panic at the first dispatch and never a silent clamp. The check itself is core's
//! one reader of seconds ([`hookbox_core::limits::duration_from_secs`]); this module only makes
//! it a serde field.
//!
//! Use with serde: `#[serde(with = "hookbox_host::duration::positive_secs")]` (more than zero)
//! or `…::secs` (zero allowed).

use std::time::Duration;

use hookbox_core::limits::{MAX_TIMEOUT_SECS, duration_from_secs};

/// Largest number of seconds any duration of a configuration file may hold: one day, core's
/// [`MAX_TIMEOUT_SECS`] (a hook's longest timeout). Every real timeout, deadline, grace period or
/// budget is far below it.
pub const MAX_CONFIG_SECS: u64 = MAX_TIMEOUT_SECS as u64;

fn de<'de, D: serde::Deserializer<'de>>(d: D, zero_ok: bool) -> Result<Duration, D::Error> {
    let v = <f64 as serde::Deserialize>::deserialize(d)?;
    // The deserializer's error names the file, line and key; the reason says the range.
    duration_from_secs("seconds", v, MAX_TIMEOUT_SECS, zero_ok)
        .map_err(|e| serde::de::Error::custom(format!("{} s: {}", e.value, e.reason)))
}

fn ser<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Seconds, more than 0 and at most [`MAX_CONFIG_SECS`].
pub mod positive_secs {
    use std::time::Duration;

    /// Reads the number of seconds.
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        super::de(d, false)
    }

    /// Writes it as a number of seconds.
    pub fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        super::ser(d, s)
    }
}

/// Seconds, 0 or more and at most [`MAX_CONFIG_SECS`].
pub mod secs {
    use std::time::Duration;

    /// Reads the number of seconds.
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        super::de(d, true)
    }

    /// Writes it as a number of seconds.
    pub fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        super::ser(d, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct T {
        #[serde(with = "positive_secs")]
        t: Duration,
    }

    #[derive(Debug, serde::Deserialize)]
    struct Z {
        #[serde(with = "secs")]
        t: Duration,
    }

    fn parse(v: &str) -> Result<Duration, String> {
        serde_json::from_str::<T>(&format!("{{\"t\": {v}}}"))
            .map(|t| t.t)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn seconds_become_durations_within_the_maximum() {
        assert_eq!(parse("2").unwrap(), Duration::from_secs(2));
        assert_eq!(parse("0.25").unwrap(), Duration::from_millis(250));
        assert_eq!(parse("86400").unwrap(), Duration::from_secs(86_400));
        for (bad, why) in [
            (
                "1e19",
                "over the maximum; give more than 0 and at most 86400 seconds",
            ),
            ("86400.5", "over the maximum"),
            ("-1", "too small"),
            ("0", "too small"),
            ("\"5\"", "invalid type"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let zero: Z = serde_json::from_str(r#"{"t": 0}"#).unwrap();
        assert_eq!(zero.t, Duration::ZERO);
    }
}
