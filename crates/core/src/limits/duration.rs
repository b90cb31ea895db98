//! Seconds as written in a file or a flag, made a [`Duration`] only when they are a duration:
//! finite, not negative (zero only where the caller allows it) and at most a stated maximum.
//! `Duration::from_secs_f64` panics on the rest, and a panic on a value someone typed is a
//! crash of the host; this is the check every reader of seconds calls instead.

use std::time::Duration;

/// Why a number of seconds is not an acceptable duration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{field}` = {value} s: {reason}")]
pub struct DurationError {
    /// The setting, as written where it was read (`timeout`, `dispatch_deadline_secs`, …).
    pub field: &'static str,
    /// The value as read.
    pub value: f64,
    /// What is wrong with it, with the allowed range.
    pub reason: String,
}

/// `secs` seconds of the setting `field` as a [`Duration`]: refused (never clamped) unless
/// finite, positive (or zero when `allow_zero`) and at most `max_secs`.
pub fn duration_from_secs(
    field: &'static str,
    secs: f64,
    max_secs: f64,
    allow_zero: bool,
) -> Result<Duration, DurationError> {
    let refuse = |reason: String| DurationError {
        field,
        value: secs,
        reason,
    };
    let range = if allow_zero {
        format!("from 0 to {max_secs} seconds")
    } else {
        format!("more than 0 and at most {max_secs} seconds")
    };
    if !secs.is_finite() {
        return Err(refuse(format!(
            "not a finite number of seconds; give {range}"
        )));
    }
    if secs < 0.0 || (secs == 0.0 && !allow_zero) {
        return Err(refuse(format!("too small; give {range}")));
    }
    if secs > max_secs {
        return Err(refuse(format!("over the maximum; give {range}")));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| refuse(format!("{e}; give {range}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::MAX_TIMEOUT_SECS;

    #[test]
    fn durations_in_range_convert() {
        assert_eq!(
            duration_from_secs("timeout", 2.5, MAX_TIMEOUT_SECS, false),
            Ok(Duration::from_millis(2500))
        );
        assert_eq!(
            duration_from_secs("grace", 0.0, 60.0, true),
            Ok(Duration::ZERO)
        );
        assert_eq!(
            duration_from_secs("timeout", MAX_TIMEOUT_SECS, MAX_TIMEOUT_SECS, false),
            Ok(Duration::from_secs(86_400))
        );
    }

    #[test]
    fn what_would_panic_or_overflow_is_refused_with_the_field() {
        // 1e19 s overflowed `Instant + Duration` in the host; NaN and infinities panic in
        // `Duration::from_secs_f64`.
        for bad in [1e19, f64::INFINITY, f64::NAN, -1.0, 0.0, 86_400.5] {
            let e = duration_from_secs("timeout", bad, MAX_TIMEOUT_SECS, false).unwrap_err();
            assert_eq!(e.field, "timeout");
            assert!(e.to_string().starts_with("`timeout` = "), "{e}");
            assert!(
                e.to_string()
                    .ends_with("give more than 0 and at most 86400 seconds"),
                "{e}"
            );
        }
        let e = duration_from_secs("dispatch_deadline_secs", 1e19, 3600.0, false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`dispatch_deadline_secs` = 10000000000000000000 s: over the maximum; give more than 0 and at most 3600 seconds"
        );
    }
}
