//! When a failed request is tried again, and after how long.

use std::time::Duration;

/// How many times a request is tried, and how long to wait between tries.
///
/// A request is tried again after 429 and any 5xx, and after any failure without an answer
/// (a connection that could not be made, a timeout, an answer cut off): every call is safe to
/// send twice (creates are idempotent on their effect key, a run create on the
/// `Idempotency-Key` the client sends with it, cancels and reads are). Never after another 4xx,
/// nor after a redirect. The pause is "full jitter": a random time between zero and
/// `base_delay` doubled per retry (at most `max_delay`), and never less than the answer's
/// `Retry-After`. An answer whose `Retry-After` is longer than `max_retry_after` (a daily quota:
/// the next UTC midnight) is returned at once rather than waited for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in all, the first included (at least 1).
    pub max_tries: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    /// 5 tries, 500 ms doubling to 20 s, a `Retry-After` of up to 60 s waited for.
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_tries: 5,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// One try, never a retry.
    pub fn never() -> RetryPolicy {
        RetryPolicy { max_tries: 1, ..RetryPolicy::default() }
    }

    /// The pause before retry number `retry` (1 for the first), or `None` when the answer's
    /// `Retry-After` is longer than this policy waits.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Option<Duration> {
        if retry_after.is_some_and(|wait| wait > self.max_retry_after) {
            return None;
        }
        let doubled = self.base_delay.saturating_mul(2u32.saturating_pow(retry.saturating_sub(1)));
        let ceiling = doubled.min(self.max_delay);
        let jittered = ceiling.mul_f64(fastrand::f64());
        Some(jittered.max(retry_after.unwrap_or(Duration::ZERO)))
    }
}

/// Whether an answer with this status is worth another try.
pub(crate) fn retryable_status(status: u16) -> bool {
    status == 429 || (500..=599).contains(&status)
}

/// Whether a request that got no answer is worth another try: one never sent (the connection
/// failed), one that timed out or failed on its way (it may have reached the server, and every
/// call is safe to send twice).
pub(crate) fn retryable_transport(error: &reqwest::Error) -> bool {
    error.is_connect() || error.is_timeout() || error.is_request()
}

/// `Retry-After` as the API sends it: whole seconds.
pub(crate) fn parse_retry_after(value: &str) -> Option<u64> {
    value.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pause_is_jittered_under_the_doubling_ceiling_and_never_under_retry_after() {
        let policy = RetryPolicy {
            max_tries: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(350),
            max_retry_after: Duration::from_secs(10),
        };
        for _ in 0..200 {
            assert!(policy.delay(1, None).unwrap() <= Duration::from_millis(100));
            assert!(policy.delay(2, None).unwrap() <= Duration::from_millis(200));
            assert!(policy.delay(9, None).unwrap() <= Duration::from_millis(350), "capped");
            assert!(policy.delay(1, Some(Duration::from_secs(2))).unwrap() >= Duration::from_secs(2));
        }
        assert_eq!(policy.delay(1, Some(Duration::from_secs(11))), None, "too long to wait");
        let pauses: std::collections::HashSet<Duration> =
            (0..50).filter_map(|_| policy.delay(3, None)).collect();
        assert!(pauses.len() > 1, "jittered, not fixed");
    }

    #[test]
    fn only_throttling_and_server_failures_are_retried() {
        for status in [429, 500, 502, 503, 504] {
            assert!(retryable_status(status), "{status}");
        }
        for status in [301, 307, 400, 401, 404, 405, 409, 413, 422] {
            assert!(!retryable_status(status), "{status}");
        }
        assert_eq!(parse_retry_after(" 12 "), Some(12));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }
}
