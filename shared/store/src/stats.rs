//! The figures `make stats` prints (`sql/stats/overview.sql`).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::error::{StoreError, StoreResult};
use crate::params::{limit, millis};
use crate::pool::GenericClient;
use crate::queries::{BACKLOG, OVERVIEW};

/// Tasks by status, and the provider figures of the tasks that succeeded recently.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Overview {
    pub by_status: BTreeMap<String, i64>,
    /// Tasks that succeeded within the window, with usage.
    pub recent: i64,
    pub latency_p50_ms: Option<f64>,
    pub latency_p99_ms: Option<f64>,
    pub input_tokens: i64,
    pub output_tokens: i64,
}

pub async fn overview(client: &impl GenericClient, window: Duration) -> StoreResult<Overview> {
    let statement = client.prepare_cached(OVERVIEW.text()).await?;
    let window_ms = millis(window);
    let row = client.query_one(&statement, &OVERVIEW.bind(&[("window_ms", &window_ms)])?).await?;
    let by_status: serde_json::Value = row.try_get("by_status")?;
    Ok(Overview {
        by_status: serde_json::from_value(by_status)
            .map_err(|e| StoreError::Corrupt(format!("counts by status: {e}")))?,
        recent: row.try_get("recent")?,
        latency_p50_ms: row.try_get("latency_p50_ms")?,
        latency_p99_ms: row.try_get("latency_p99_ms")?,
        input_tokens: row.try_get("input_tokens")?,
        output_tokens: row.try_get("output_tokens")?,
    })
}

/// The work in flight, as the sweeper samples it for the backlog metrics (`sql/stats/backlog.sql`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Backlog {
    /// Queued tasks, counted up to the cap.
    pub queued: i64,
    /// Running tasks, counted up to the cap.
    pub running: i64,
    pub oldest_queued_ms: Option<f64>,
    pub oldest_running_ms: Option<f64>,
}

/// Sample the backlog; each count stops at `cap`.
pub async fn backlog(client: &impl GenericClient, cap: usize) -> StoreResult<Backlog> {
    let statement = client.prepare_cached(BACKLOG.text()).await?;
    let cap = limit(cap);
    let row = client.query_one(&statement, &BACKLOG.bind(&[("cap", &cap)])?).await?;
    Ok(Backlog {
        queued: row.try_get("queued")?,
        running: row.try_get("running")?,
        oldest_queued_ms: row.try_get("oldest_queued_ms")?,
        oldest_running_ms: row.try_get("oldest_running_ms")?,
    })
}
