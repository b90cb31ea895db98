//! Durations in configuration files (`tenant.toml`, `serve.toml`): a number of seconds read
//! straight into a [`Duration`] by a deserializer that refuses what would misbehave later — a
//! negative, NaN or infinite number, and anything over [`MAX_CONFIG_SECS`] (time arithmetic
//! near 1e19 s overflows and panics) — so a bad value is a parse error naming its file, line and
//! key, never a panic at the first dispatch and never a silent clamp.
//!
//! Use with serde: `#[serde(with = "hookbox_host::duration::positive_secs")]` (more than zero)
//! or `…::secs` (zero allowed).

use std::time::Duration;

/// Largest number of seconds any duration of a configuration file may hold: one day. Every
/// real timeout, deadline, grace period or budget is far below it.
pub const MAX_CONFIG_SECS: u64 = 86_400;

/// Why a number of seconds is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SecsError {
    /// NaN, infinite or negative.
    #[error("is {0}: it must be a number of seconds, 0 or more")]
    NotANumber(f64),
    /// Zero where it would mean nothing can run.
    #[error("is 0: it must be more than 0 seconds")]
    Zero,
    /// Over the maximum.
    #[error("is {value} seconds: over the maximum of {max} ({max}s = {})", human(*.max))]
    TooLong {
        /// The value.
        value: f64,
        /// The maximum, in seconds.
        max: u64,
    },
}

fn human(secs: u64) -> String {
    match secs {
        s if s % 86_400 == 0 => format!("{} day(s)", s / 86_400),
        s if s % 3600 == 0 => format!("{} hour(s)", s / 3600),
        s => format!("{s} s"),
    }
}

/// `value` seconds as a duration, within `0 ..= max` (above 0 unless `zero_ok`).
pub fn from_secs(value: f64, zero_ok: bool, max: u64) -> Result<Duration, SecsError> {
    if !value.is_finite() || value < 0.0 {
        return Err(SecsError::NotANumber(value));
    }
    if value == 0.0 && !zero_ok {
        return Err(SecsError::Zero);
    }
    // `max` is at most a few days: exact as an f64.
    if value > max as f64 {
        return Err(SecsError::TooLong { value, max });
    }
    Duration::try_from_secs_f64(value).map_err(|_| SecsError::NotANumber(value))
}

fn de<'de, D: serde::Deserializer<'de>>(d: D, zero_ok: bool) -> Result<Duration, D::Error> {
    let v = <f64 as serde::Deserialize>::deserialize(d)?;
    from_secs(v, zero_ok, MAX_CONFIG_SECS).map_err(serde::de::Error::custom)
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
            ("1e19", "over the maximum of 86400"),
            ("86400.5", "over the maximum"),
            ("-1", "0 or more"),
            ("0", "more than 0"),
            ("\"5\"", "invalid type"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert_eq!(from_secs(0.0, true, 10), Ok(Duration::ZERO));
        assert_eq!(
            from_secs(f64::NAN, true, 10).unwrap_err().to_string(),
            "is NaN: it must be a number of seconds, 0 or more"
        );
    }
}
