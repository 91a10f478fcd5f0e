//! The application's tasks created in a window, by status, and their usage by day and model
//! (`sql/summary/summary.sql`): `GET /v1/summary`.

use aitasks_contracts::{DailyCost, StatusCounts, SummaryWindow, TenantSummary, SUMMARY_SCAN_MAX};
use chrono::NaiveDate;

use crate::error::{StoreError, StoreResult};
use crate::pool::GenericClient;
use crate::queries::SUMMARY;

/// The newest [`SUMMARY_SCAN_MAX`] tasks of this application created in `window`, counted by
/// status and summed by UTC day and model (ordered by day, then model); `complete` is false when
/// the window holds more. One round trip.
pub async fn summary(
    client: &impl GenericClient,
    app_id: &str,
    window: &SummaryWindow,
) -> StoreResult<TenantSummary> {
    let statement = client.prepare_cached(SUMMARY.text()).await?;
    let examine_max = SUMMARY_SCAN_MAX as i64;
    let params = SUMMARY.bind(&[
        ("app_id", &app_id),
        ("created_after", &window.created_after),
        ("created_before", &window.created_before),
        ("examine_max", &examine_max),
    ])?;
    let rows = client.query(&statement, &params).await?;
    let mut tasks = StatusCounts::default();
    let mut costs: Vec<DailyCost> = Vec::new();
    let mut examined = 0u64;
    let mut more = false;
    for row in &rows {
        let count = row.try_get::<_, i64>("tasks")?.max(0) as u64;
        let status: String = row.try_get("status")?;
        let slot = match status.as_str() {
            "queued" => &mut tasks.queued,
            "running" => &mut tasks.running,
            "succeeded" => &mut tasks.succeeded,
            "failed" => &mut tasks.failed,
            "canceled" => &mut tasks.canceled,
            other => return Err(StoreError::Corrupt(format!("task status {other:?}"))),
        };
        *slot += count;
        examined += count;
        more |= row.try_get::<_, bool>("more")?;
        let day: String = row.try_get("day")?;
        let day = NaiveDate::parse_from_str(&day, "%Y-%m-%d")
            .map_err(|_| StoreError::Corrupt(format!("summary day {day:?}")))?;
        let model_id: String = row.try_get("model_id")?;
        let input_tokens = row.try_get::<_, i64>("input_tokens")?.max(0) as u64;
        let output_tokens = row.try_get::<_, i64>("output_tokens")?.max(0) as u64;
        let cost: Option<f64> = row.try_get("estimated_cost_usd")?;
        // The rows come by day, model, status: one model's day is consecutive rows.
        match costs.last_mut() {
            Some(last) if last.day == day && last.model_id == model_id => {
                last.tasks += count;
                last.input_tokens += input_tokens;
                last.output_tokens += output_tokens;
                last.estimated_cost_usd = match (last.estimated_cost_usd, cost) {
                    (Some(a), Some(b)) => Some(a + b),
                    (a, b) => a.or(b),
                };
            }
            _ => costs.push(DailyCost {
                day,
                model_id,
                tasks: count,
                input_tokens,
                output_tokens,
                estimated_cost_usd: cost,
            }),
        }
    }
    Ok(TenantSummary {
        created_after: window.created_after,
        created_before: window.created_before,
        tasks,
        costs,
        examined,
        complete: !more,
    })
}
