//! Each tenant's read rate (docs/api.md, "Read rate"): a token bucket of read units
//! ([`ReadCost`]) per tenant, `AITASK_READ_RATE` a second up to `AITASK_READ_BURST`.
//!
//! Two buckets of the same size. Every read is taken from this instance's own bucket of its
//! tenant first: in memory, no database write, and a tenant that floods one instance (the dev
//! server, a warm Lambda instance called in a loop) is refused there without a statement. The
//! reads that cost a page or more are then also taken from the tenant's bucket in Postgres
//! (`store::spend_reads`, one upsert of the tenant's row), which every instance shares: that holds
//! a tenant's pages, runs and summaries to its rate however many instances serve it. A read by
//! key is not written there: the write would cost as much as the read itself; the instance's own
//! bucket, the API's throttling and the function's concurrency bound those.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use aitasks_contracts::{AppId, ReadCost};
use aitasks_store::{self as store, ReadBucket, ReadSpend, StorePool};

use crate::api_error::ApiError;
use crate::config::read_rate::ReadRateConfig;

/// Tenants whose bucket one instance keeps; past it, the full buckets (the same as none) go.
const LOCAL_TENANTS_MAX: usize = 10_000;

/// One tenant's bucket in this instance.
#[derive(Debug, Clone, Copy)]
struct Local {
    tokens: f64,
    at: Instant,
}

/// The read rate of every tenant, this instance's side and the shared one.
#[derive(Debug)]
pub struct ReadRate {
    config: ReadRateConfig,
    local: Mutex<HashMap<String, Local>>,
}

impl ReadRate {
    pub fn new(config: ReadRateConfig) -> ReadRate {
        ReadRate { config, local: Mutex::new(HashMap::new()) }
    }

    fn bucket(&self) -> ReadBucket {
        ReadBucket { per_second: f64::from(self.config.per_second), burst: f64::from(self.config.burst) }
    }

    /// Take `cost` from `tenant`'s rate, or refuse the read: 429 `WORKFLOW_AI_READ_RATE` with the
    /// time until the bucket holds it. A read by key touches no database; a page or more spends
    /// from the tenant's shared bucket too (one statement).
    pub async fn charge(&self, pool: &StorePool, tenant: &AppId, cost: ReadCost) -> Result<(), ApiError> {
        if self.config.is_off() {
            return Ok(());
        }
        let units = f64::from(cost.units());
        self.take_local(tenant.as_str(), units, Instant::now())
            .map_err(|retry_after| ApiError::ReadRate { retry_after })?;
        if cost == ReadCost::ByKey {
            return Ok(());
        }
        let spent = async {
            let client = store::client(pool).await?;
            store::spend_reads(&client, tenant.as_str(), units, self.bucket()).await
        };
        match spent.await {
            Ok(ReadSpend::Spent) => Ok(()),
            Ok(ReadSpend::Short { refilled_in }) => {
                // Not read after all: this instance's share goes back.
                self.give_back_local(tenant.as_str(), units);
                Err(ApiError::ReadRate { retry_after: refilled_in })
            }
            Err(error) => {
                self.give_back_local(tenant.as_str(), units);
                Err(error.into())
            }
        }
    }

    /// Take `units` from this instance's bucket of `tenant` at `now`, or say how long until it
    /// holds them.
    fn take_local(&self, tenant: &str, units: f64, now: Instant) -> Result<(), Duration> {
        let (rate, burst) = (f64::from(self.config.per_second), f64::from(self.config.burst));
        let mut buckets = self.local.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if buckets.len() >= LOCAL_TENANTS_MAX && !buckets.contains_key(tenant) {
            buckets.retain(|_, bucket| refilled(bucket, now, rate, burst) < burst);
        }
        let bucket = buckets.entry(tenant.to_owned()).or_insert(Local { tokens: burst, at: now });
        let held = refilled(bucket, now, rate, burst);
        *bucket = Local { tokens: held, at: now.max(bucket.at) };
        if held >= units {
            bucket.tokens = held - units;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((units - held) / rate))
        }
    }

    fn give_back_local(&self, tenant: &str, units: f64) {
        let burst = f64::from(self.config.burst);
        let mut buckets = self.local.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(bucket) = buckets.get_mut(tenant) {
            bucket.tokens = (bucket.tokens + units).min(burst);
        }
    }
}

/// What `bucket` holds at `now`.
fn refilled(bucket: &Local, now: Instant, rate: f64, burst: f64) -> f64 {
    let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
    (bucket.tokens + elapsed * rate).min(burst)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(per_second: u32, burst: u32) -> ReadRate {
        ReadRate::new(ReadRateConfig { per_second, burst })
    }

    #[test]
    fn a_tenant_spends_its_burst_then_its_rate_and_another_tenant_is_untouched() {
        let reads = rate(100, 1_000);
        let start = Instant::now();
        let wide = f64::from(ReadCost::Wide.units());
        assert_eq!(reads.take_local("a", wide, start), Ok(()), "a full bucket at first");
        let refused = reads.take_local("a", wide, start).unwrap_err();
        assert_eq!(refused, Duration::from_secs(10), "1,000 units at 100 a second");
        assert_eq!(reads.take_local("b", wide, start), Ok(()), "b has its own bucket");
        let page = f64::from(ReadCost::Page.units());
        assert!(reads.take_local("a", page, start + Duration::from_millis(100)).is_err(), "10 units in");
        assert_eq!(reads.take_local("a", page, start + Duration::from_millis(200)), Ok(()), "20 units in");
        // A refused read took nothing: after ten seconds more the bucket holds the wide read.
        assert_eq!(reads.take_local("a", wide, start + Duration::from_millis(10_200)), Ok(()));
        // Never more than the burst, however long the quiet.
        let later = start + Duration::from_secs(3_600);
        assert_eq!(reads.take_local("a", wide, later), Ok(()));
        assert!(reads.take_local("a", 1.0, later).is_err());
        reads.give_back_local("a", wide);
        assert_eq!(reads.take_local("a", wide, later), Ok(()), "given back");
    }

    #[test]
    fn the_buckets_kept_stay_bounded_and_only_full_ones_are_dropped() {
        let reads = rate(1, 1_000);
        let now = Instant::now();
        for tenant in 0..LOCAL_TENANTS_MAX {
            let units = if tenant == 0 { 1_000.0 } else { 0.0 };
            reads.take_local(&tenant.to_string(), units, now).unwrap();
        }
        reads.take_local("one more", 1.0, now).unwrap();
        let kept = reads.local.lock().unwrap();
        assert_eq!(kept.len(), 2, "the spent bucket and the new one");
        assert!(kept["0"].tokens < 1.0, "the spent bucket is remembered");
    }
}
