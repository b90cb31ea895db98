//! A token bucket for a host's dispatch rate ([`RateLimit`]): `per_second` tokens refill
//! continuously up to `burst`; a dispatch takes one or is refused. The bucket belongs to the
//! host's long-lived owner: replacing the policy changes its limit, never refills it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use crate::policy::RateLimit;

#[derive(Debug)]
pub(crate) struct TokenBucket {
    /// Whether a limit is set: without one (the default) a dispatch passes without the lock,
    /// which every dispatch of the host on every core would otherwise take.
    limited: AtomicBool,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// `None`: no limit, every dispatch passes.
    limit: Option<RateLimit>,
    tokens: f64,
    last: Instant,
}

/// The burst as tokens; [`HostPolicy::validate`](crate::HostPolicy::validate) refuses a burst of
/// 0 and a rate that is not above 0.
fn burst(limit: RateLimit) -> f64 {
    f64::from(limit.burst)
}

impl TokenBucket {
    pub(crate) fn new(limit: Option<RateLimit>) -> TokenBucket {
        TokenBucket {
            limited: AtomicBool::new(limit.is_some()),
            state: Mutex::new(State {
                limit,
                tokens: limit.map_or(0.0, burst),
                last: Instant::now(),
            }),
        }
    }

    /// A new limit. The tokens left carry over (cut to the new burst): a replaced policy does
    /// not hand out a fresh burst. A bucket that had no limit starts full.
    pub(crate) fn set_limit(&self, limit: Option<RateLimit>) {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        s.tokens = match (s.limit, limit) {
            (_, None) => 0.0,
            (None, Some(new)) => burst(new),
            (Some(old), Some(new)) => refilled(&s, old, now).min(burst(new)),
        };
        s.limit = limit;
        s.last = now;
        self.limited.store(limit.is_some(), Ordering::Release);
    }

    /// Takes a token now, if there is one.
    pub(crate) fn try_take(&self) -> bool {
        if !self.limited.load(Ordering::Acquire) {
            return true;
        }
        self.try_take_at(Instant::now())
    }

    fn try_take_at(&self, now: Instant) -> bool {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(limit) = s.limit else {
            return true;
        };
        let tokens = refilled(&s, limit, now);
        s.last = now;
        if tokens >= 1.0 {
            s.tokens = tokens - 1.0;
            true
        } else {
            s.tokens = tokens;
            false
        }
    }
}

/// The tokens at `now`, refilled since the last take and capped at the burst.
fn refilled(s: &State, limit: RateLimit, now: Instant) -> f64 {
    let refill = now.saturating_duration_since(s.last).as_secs_f64() * limit.per_second;
    (s.tokens + refill).min(burst(limit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn burst_then_refill() {
        let b = TokenBucket::new(Some(RateLimit {
            per_second: 10.0,
            burst: 3,
        }));
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

    #[test]
    fn a_new_limit_carries_the_tokens_left_over() {
        let slow = RateLimit {
            per_second: 0.001,
            burst: 2,
        };
        let b = TokenBucket::new(Some(slow));
        assert!(b.try_take() && b.try_take() && !b.try_take());
        // The same limit again (a reload): still empty, not a fresh burst.
        b.set_limit(Some(slow));
        assert!(!b.try_take());
        b.set_limit(None);
        assert!((0..100).all(|_| b.try_take()), "no limit");
        b.set_limit(Some(slow));
        assert!(b.try_take() && b.try_take() && !b.try_take());
    }
}
