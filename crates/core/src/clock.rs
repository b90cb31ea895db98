//! Wall-clock time for records (replay, `HookFired` timestamps, tenant load times): one
//! function, so every record counts time the same way.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch. A clock set before 1970 reads 0 and one past the year
/// 584,556,019 reads `u64::MAX`: a record's timestamp is informative, never a reason to fail.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_is_after_this_code_was_written_and_moves_forward() {
        let a = now_ms();
        // 2025-01-01T00:00:00Z.
        assert!(a > 1_735_689_600_000, "{a}");
        let b = now_ms();
        assert!(b >= a);
    }
}
