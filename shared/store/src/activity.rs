//! The tenant's activity over time (`sql/activity/`, migrations/V40): the read behind
//! `GET /v1/activity`, summing the window's minute or hour rows into its buckets, and the
//! sweeper's fold and prune of those rows.

use std::collections::BTreeMap;
use std::time::Duration;

use aitasks_contracts::{
    Activity, ActivityBucket, ActivityWindow, FailureCount, Histogram, ModelActivity, ACTIVITY_KEPT_DAYS,
    ACTIVITY_MINUTES_KEPT_HOURS, ACTIVITY_ROWS_MAX,
};
use chrono::{DateTime, Utc};
use tokio_postgres::Row;

use crate::error::StoreResult;
use crate::params::{limit, millis};
use crate::pool::GenericClient;
use crate::queries::{ACTIVITY, FOLD_ACTIVITY, PRUNE_ACTIVITY};

/// A minute is folded once it is this long closed: a transaction that began in it has ended.
const CLOSED_AFTER: Duration = Duration::from_secs(120);

/// One bucket's sums while the rows are read.
#[derive(Default)]
struct Sums {
    created: u64,
    succeeded: u64,
    failed: u64,
    canceled: u64,
    failures: BTreeMap<String, u64>,
    wait: Histogram,
    run: Histogram,
    input_tokens: u64,
    output_tokens: u64,
    cost: Option<f64>,
    models: BTreeMap<String, ModelActivity>,
}

fn count(row: &Row, name: &str) -> StoreResult<u64> {
    Ok(row.try_get::<_, i64>(name)?.max(0) as u64)
}

fn add_cost(total: &mut Option<f64>, cost: Option<f64>) {
    if let Some(cost) = cost {
        *total = Some(total.unwrap_or(0.0) + cost);
    }
}

impl Sums {
    fn add(&mut self, row: &Row) -> StoreResult<()> {
        let (succeeded, failed, canceled) =
            (count(row, "succeeded")?, count(row, "failed")?, count(row, "canceled")?);
        let (input_tokens, output_tokens) = (count(row, "input_tokens")?, count(row, "output_tokens")?);
        let cost: Option<f64> = row.try_get("cost_usd")?;
        // Saturating: the token sums come from providers' answers (held below 9e18 a row).
        self.created = self.created.saturating_add(count(row, "created")?);
        self.succeeded = self.succeeded.saturating_add(succeeded);
        self.failed = self.failed.saturating_add(failed);
        self.canceled = self.canceled.saturating_add(canceled);
        // A code's count that is not a whole number is not ours: it is left out, not trusted.
        let failures: serde_json::Value = row.try_get("failures")?;
        for (code, tasks) in failures.as_object().into_iter().flatten() {
            let total = self.failures.entry(code.clone()).or_default();
            *total = total.saturating_add(tasks.as_u64().unwrap_or(0));
        }
        // Interleaved: queue wait in bin b at 2b - 1, run time at 2b (migrations/V40).
        let times: Vec<i32> = row.try_get("times")?;
        self.wait.add(&times.iter().step_by(2).copied().collect::<Vec<_>>());
        self.run.add(&times.iter().skip(1).step_by(2).copied().collect::<Vec<_>>());
        self.input_tokens = self.input_tokens.saturating_add(input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(output_tokens);
        add_cost(&mut self.cost, cost);
        let model_id: String = row.try_get("model_id")?;
        let model = self.models.entry(model_id.clone()).or_insert_with(|| ModelActivity {
            model_id,
            tasks: 0,
            input_tokens: 0,
            output_tokens: 0,
            estimated_cost_usd: None,
        });
        model.tasks = model.tasks.saturating_add(succeeded.saturating_add(failed).saturating_add(canceled));
        model.input_tokens = model.input_tokens.saturating_add(input_tokens);
        model.output_tokens = model.output_tokens.saturating_add(output_tokens);
        add_cost(&mut model.estimated_cost_usd, cost);
        Ok(())
    }

    fn into_bucket(self, start: DateTime<Utc>) -> ActivityBucket {
        let mut failures: Vec<FailureCount> = self
            .failures
            .into_iter()
            .filter(|(_, tasks)| *tasks > 0)
            .map(|(error_code, tasks)| FailureCount { error_code, tasks })
            .collect();
        failures.sort_by(|a, b| b.tasks.cmp(&a.tasks).then_with(|| a.error_code.cmp(&b.error_code)));
        ActivityBucket {
            start,
            created: self.created,
            succeeded: self.succeeded,
            failed: self.failed,
            canceled: self.canceled,
            failures,
            queue_wait_ms: self.wait.percentiles(),
            run_ms: self.run.percentiles(),
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            estimated_cost_usd: self.cost,
            models: self.models.into_values().collect(),
        }
    }
}

/// This application's activity in `window`: every bucket, oldest first, summed from at most
/// [`ACTIVITY_ROWS_MAX`] rows of its own (`complete: false` when the window held more). One
/// round trip.
pub async fn activity(
    client: &impl GenericClient,
    app_id: &str,
    window: &ActivityWindow,
) -> StoreResult<Activity> {
    let statement = client.prepare_cached(ACTIVITY.text()).await?;
    let rows_max = ACTIVITY_ROWS_MAX as i64;
    // An hour or more reads the hour rows (and the minutes not folded yet); less, the minutes.
    let hourly = window.bucket_seconds >= 3_600;
    let params = ACTIVITY.bind(&[
        ("app_id", &app_id),
        ("from", &window.from),
        ("to", &window.to),
        ("rows_max", &rows_max),
        ("hourly", &hourly),
    ])?;
    let rows = client.query(&statement, &params).await?;
    let mut sums: Vec<Sums> = (0..window.buckets()).map(|_| Sums::default()).collect();
    // Newest first: an answer cut at the bound keeps the latest buckets.
    for row in rows.iter().take(ACTIVITY_ROWS_MAX) {
        let starts_at: DateTime<Utc> = row.try_get("starts_at")?;
        // An hour row lies in one bucket whole: a bucket under an hour reads only minute rows.
        if let Some(sum) = window.bucket_of(starts_at).and_then(|index| sums.get_mut(index)) {
            sum.add(row)?;
        }
    }
    let buckets = sums
        .into_iter()
        .enumerate()
        .map(|(index, sum)| sum.into_bucket(window.bucket_start(index)))
        .collect();
    Ok(Activity {
        from: window.from,
        to: window.to,
        bucket_seconds: window.bucket_seconds,
        complete: rows.len() <= ACTIVITY_ROWS_MAX,
        buckets,
    })
}

/// The sweeper's fold: at most `max_rows` of the rows backends counted into, of minutes closed
/// two minutes ago, folded into their minute's row and their hour's. How many rows it folded.
pub async fn fold_activity(client: &impl GenericClient, max_rows: usize) -> StoreResult<u64> {
    let statement = client.prepare_cached(FOLD_ACTIVITY.text()).await?;
    let closed_ms = millis(CLOSED_AFTER);
    let max_rows = limit(max_rows);
    let params = FOLD_ACTIVITY.bind(&[("closed_ms", &closed_ms), ("limit", &max_rows)])?;
    let row = client.query_one(&statement, &params).await?;
    Ok(row.try_get::<_, i64>("folded")?.max(0) as u64)
}

/// The sweeper's prune: at most `max_rows` folded minute rows older than
/// [`ACTIVITY_MINUTES_KEPT_HOURS`] (their hours hold them) and as many hour rows older than
/// [`ACTIVITY_KEPT_DAYS`] deleted. How many.
pub async fn prune_activity(client: &impl GenericClient, max_rows: usize) -> StoreResult<u64> {
    let statement = client.prepare_cached(PRUNE_ACTIVITY.text()).await?;
    let (kept_hours, kept_days) = (ACTIVITY_MINUTES_KEPT_HOURS, ACTIVITY_KEPT_DAYS);
    let max_rows = limit(max_rows);
    let params = PRUNE_ACTIVITY.bind(&[
        ("minutes_kept_hours", &kept_hours),
        ("kept_days", &kept_days),
        ("limit", &max_rows),
    ])?;
    Ok(client.execute(&statement, &params).await?)
}
