//! A token bucket for a host's dispatch rate ([`RateLimit`]): `per_second` tokens refill
//! continuously up to `burst`; a dispatch takes one or is refused.

use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use crate::policy::RateLimit;

#[derive(Debug)]
pub(crate) struct TokenBucket {
    limit: RateLimit,
    state: Mutex<(f64, Instant)>,
}

impl TokenBucket {
    pub(crate) fn new(limit: RateLimit) -> TokenBucket {
        TokenBucket {
            limit,
            state: Mutex::new((f64::from(limit.burst.max(1)), Instant::now())),
        }
    }

    /// Takes a token now, if there is one.
    pub(crate) fn try_take(&self) -> bool {
        self.try_take_at(Instant::now())
    }

    fn try_take_at(&self, now: Instant) -> bool {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let (tokens, last) = *s;
        let cap = f64::from(self.limit.burst.max(1));
        let refill =
            now.saturating_duration_since(last).as_secs_f64() * self.limit.per_second.max(0.0);
        let tokens = (tokens + refill).min(cap);
        if tokens >= 1.0 {
            *s = (tokens - 1.0, now);
            true
        } else {
            *s = (tokens, now);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn burst_then_refill() {
        let b = TokenBucket::new(RateLimit {
            per_second: 10.0,
            burst: 3,
        });
        let t0 = Instant::now();
        assert!(b.try_take_at(t0) && b.try_take_at(t0) && b.try_take_at(t0));
        assert!(!b.try_take_at(t0));
        // 100 ms at 10/s refills one token.
        assert!(b.try_take_at(t0 + Duration::from_millis(100)));
        assert!(!b.try_take_at(t0 + Duration::from_millis(100)));
        // Never more than the burst, however long the quiet.
        let later = t0 + Duration::from_secs(3600);
        assert!((0..3).all(|_| b.try_take_at(later)));
        assert!(!b.try_take_at(later));
    }
}
