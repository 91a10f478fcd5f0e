//! Provider-side limits, seen from the provider client: a [`CallGate`] is asked before every
//! call of an attempt (repair turns included) and told what each call used, so a per-minute
//! limit counts what the provider counts, and every call holds its tokens before it starts.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// What a call may use at most, as reserved before it starts: its input (an upper bound from
/// the bytes sent) and its output cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallEstimate {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl CallEstimate {
    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

/// What a gate let through, handed back to it when the call is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Passed {
    /// The gate's own mark of the call (the minute it was counted in), if it counted it.
    pub counted_at: Option<chrono::DateTime<chrono::Utc>>,
    pub reserved: u64,
}

/// A boxed future of a gate (the gate is a trait object).
pub type GateFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Provider-side limits on each call of an attempt.
pub trait CallGate: Send + Sync {
    /// Before a call: `Err(wait)` when the limit is reached for about `wait` (the attempt's
    /// first call then ends it with [`crate::ProviderError::AtLimit`]; a later one waits).
    fn pass(&self, estimate: CallEstimate) -> GateFuture<'_, Result<Passed, Duration>>;
    /// After the call: its reservation replaced by the tokens it used, or kept when it failed
    /// without saying (`None`).
    fn reconcile_tokens(&self, passed: Passed, used: Option<u64>) -> GateFuture<'_, ()>;
}

/// No limits.
pub struct NoLimits;

impl CallGate for NoLimits {
    fn pass(&self, estimate: CallEstimate) -> GateFuture<'_, Result<Passed, Duration>> {
        Box::pin(async move { Ok(Passed { counted_at: None, reserved: estimate.tokens() }) })
    }

    fn reconcile_tokens(&self, _passed: Passed, _used: Option<u64>) -> GateFuture<'_, ()> {
        Box::pin(async {})
    }
}
