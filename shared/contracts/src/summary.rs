//! `GET /v1/summary?createdAfter=&createdBefore=` (docs/api.md, "History"): the tenant's tasks
//! created in a window, counted by status, and their tokens and estimated cost by day and model.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::history::instant;
use crate::limits::{SUMMARY_WINDOW_DEFAULT_DAYS, SUMMARY_WINDOW_MAX_DAYS};
use crate::problems::{Path, Problems};

/// The raw query parameters of `GET /v1/summary`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SummaryQuery<'a> {
    pub created_after: Option<&'a str>,
    pub created_before: Option<&'a str>,
}

/// The window a summary covers: tasks created in `[created_after, created_before)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryWindow {
    pub created_after: DateTime<Utc>,
    pub created_before: DateTime<Utc>,
}

impl SummaryWindow {
    /// `createdBefore` defaults to `now`, `createdAfter` to
    /// [`SUMMARY_WINDOW_DEFAULT_DAYS`] before `createdBefore`; the window is not empty and at
    /// most [`SUMMARY_WINDOW_MAX_DAYS`] long.
    pub fn parse(query: SummaryQuery<'_>, now: DateTime<Utc>) -> Result<SummaryWindow, Problems> {
        let mut problems = Problems::new();
        let after = instant(&mut problems, "createdAfter", query.created_after);
        let before = instant(&mut problems, "createdBefore", query.created_before);
        if !problems.is_empty() {
            return Err(problems);
        }
        let created_before = before.unwrap_or(now);
        let default_after = created_before.checked_sub_signed(Duration::days(SUMMARY_WINDOW_DEFAULT_DAYS));
        let Some(created_after) = after.or(default_after) else {
            problems.add(&Path::root().key("createdBefore"), "is too early a time");
            return Err(problems);
        };
        if created_after >= created_before {
            problems.add(&Path::root().key("createdBefore"), "must be later than createdAfter");
        } else if created_before - created_after > Duration::days(SUMMARY_WINDOW_MAX_DAYS) {
            problems.add(
                &Path::root().key("createdAfter"),
                format!("must be at most {SUMMARY_WINDOW_MAX_DAYS} days before createdBefore (default: now)"),
            );
        }
        problems.into_result(SummaryWindow { created_after, created_before })
    }
}

/// Tasks by status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusCounts {
    pub queued: u64,
    pub running: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub canceled: u64,
}

/// The tasks of one model created on one UTC day, and what their answers used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DailyCost {
    /// `YYYY-MM-DD`, UTC.
    pub day: NaiveDate,
    pub model_id: String,
    /// Every task of that day and model, whatever its status.
    pub tasks: u64,
    /// Summed over the tasks with usage (those that succeeded on a provider's answer).
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Summed over the tasks whose usage has a cost (their profile has prices); `null` when none
    /// has.
    pub estimated_cost_usd: Option<f64>,
}

/// `GET /v1/summary`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TenantSummary {
    pub created_after: DateTime<Utc>,
    pub created_before: DateTime<Utc>,
    pub tasks: StatusCounts,
    /// By day, then model id.
    pub costs: Vec<DailyCost>,
    /// Tasks read, newest first (at most [`crate::limits::SUMMARY_SCAN_MAX`]).
    pub examined: u64,
    /// `false` when the window holds more tasks than were read: the figures are the newest ones'.
    pub complete: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn paths(query: SummaryQuery<'_>) -> Vec<String> {
        let now = at("2026-03-01T00:00:00Z");
        SummaryWindow::parse(query, now).unwrap_err().paths().into_iter().map(str::to_owned).collect()
    }

    #[test]
    fn the_window_defaults_to_the_last_seven_days_and_spans_at_most_31() {
        let now = at("2026-03-01T00:00:00Z");
        let window = SummaryWindow::parse(SummaryQuery::default(), now).unwrap();
        assert_eq!((window.created_after, window.created_before), (at("2026-02-22T00:00:00Z"), now));
        let before_only = SummaryQuery { created_before: Some("2026-02-10T00:00:00Z"), ..Default::default() };
        assert_eq!(SummaryWindow::parse(before_only, now).unwrap().created_after, at("2026-02-03T00:00:00Z"));
        let full = SummaryQuery {
            created_after: Some("2026-01-01T00:00:00+01:00"),
            created_before: Some("2026-01-31T23:00:00Z"),
        };
        let window = SummaryWindow::parse(full, now).unwrap();
        assert_eq!(window.created_after, at("2025-12-31T23:00:00Z"));

        assert_eq!(
            paths(SummaryQuery { created_after: Some("2026-01-01T00:00:00Z"), ..Default::default() }),
            ["createdAfter"]
        );
        let reversed = SummaryQuery {
            created_after: Some("2026-02-01T00:00:00Z"),
            created_before: Some("2026-02-01T00:00:00Z"),
        };
        assert_eq!(paths(reversed), ["createdBefore"]);
        let bad = SummaryQuery { created_after: Some("last week"), created_before: Some("2026-02-01") };
        assert_eq!(paths(bad), ["createdAfter", "createdBefore"]);
    }

    #[test]
    fn a_day_is_written_as_a_date() {
        let cost = DailyCost {
            day: NaiveDate::from_ymd_opt(2026, 2, 3).unwrap(),
            model_id: "default".into(),
            tasks: 2,
            input_tokens: 10,
            output_tokens: 4,
            estimated_cost_usd: None,
        };
        let json = serde_json::to_value(&cost).unwrap();
        assert_eq!(json["day"], "2026-02-03");
        assert_eq!(json["modelId"], "default");
        assert!(json["estimatedCostUsd"].is_null());
    }
}
