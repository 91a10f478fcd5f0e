//! A provider outage (issue 49), at real time through the dev server: 1,000 tasks created on
//! three-attempt budgets (`AITASK_MAX_ATTEMPTS=3`) while the stub provider answers every call
//! with HTTP 503, for ten minutes; then it answers again. The sweeps run on the deployed
//! one-minute schedule and the automatic hold on its defaults (held after 5 failures of
//! different tasks in a row, one probe every 10 s).
//!
//! Printed: the tasks that failed (the promise: none), the time from the provider's return to
//! each task's end (p50, max; the promise: every task succeeded within 2 minutes), the provider
//! calls made during the outage (how many attempts it cost), and the automatic hold as
//! `GET /v1/holds` shows it.

use std::time::{Duration, Instant};

use aitasks_testkit::{percentile, Reply, Stack};
use serde_json::{json, Value};

use crate::size::Size;
use crate::{row, Failure};

const TENANT: &str = "app-outage";

pub(crate) async fn section(size: Size) -> Result<Value, Failure> {
    let tasks: usize = size.pick(1_000, 1_000, 40);
    let outage = size.point(600, 180).max(Duration::from_secs(20));
    println!(
        "\noutage: {tasks} tasks on three-attempt budgets, the provider answering 503 for {:.0} s, at real time",
        outage.as_secs_f64()
    );
    let stack = Stack::start_with(&[
        ("RUST_LOG", "info"),
        ("AITASK_METRICS", "off"),
        ("AITASK_MAX_ATTEMPTS", "3"),
        ("AITASK_SWEEP_INTERVAL_MS", "60000"),
        ("AITASK_UNSENT_GRACE_MS", "60000"),
    ])
    .await;
    stack.stub.set_default(Reply::status(503));
    let api = stack.api(TENANT);
    let outage_started = Instant::now();
    let mut ids = Vec::with_capacity(tasks);
    for chunk in (0..tasks).collect::<Vec<_>>().chunks(1_000) {
        let items: Vec<Value> = chunk
            .iter()
            .map(|n| {
                json!({"owner": {"scopeId": "outage"}, "stepKey": "label", "effectKey": format!("outage-{n}"),
                       "modelId": "default",
                       "request": {"kind": "classify", "prompt": "Sentiment?", "input": format!("text {n}"),
                                   "choices": ["pos", "neg"]}})
            })
            .collect();
        let (status, answer) = api.post("/v1/tasks/batch", &json!({"tasks": items})).await;
        if status != 200 {
            return Err(format!("the batch answered {status}: {answer}").into());
        }
        for result in answer["results"].as_array().ok_or("no results")? {
            ids.push(
                result["task"]["id"]
                    .as_str()
                    .ok_or_else(|| format!("an item was refused: {result}"))?
                    .to_owned(),
            );
        }
    }
    tokio::time::sleep(outage.saturating_sub(outage_started.elapsed())).await;
    let calls_during = stack.stub.calls();
    let failed_during = stack
        .db
        .count(&format!("SELECT count(*) FROM tasks WHERE app_id = '{TENANT}' AND status = 'failed'"))
        .await;
    let spent_during = stack
        .db
        .count(&format!("SELECT COALESCE(sum(attempts), 0)::bigint FROM tasks WHERE app_id = '{TENANT}'"))
        .await;
    let (_, holds_during) = api.get("/v1/holds").await;
    stack.stub.set_default(Reply::Auto);
    let returned = Instant::now();
    let open =
        format!("SELECT count(*) FROM tasks WHERE app_id = '{TENANT}' AND status IN ('queued', 'running')");
    let patience = Duration::from_secs(size.pick(900, 600, 300));
    let mut look = tokio::time::interval(Duration::from_millis(250));
    while returned.elapsed() < patience {
        look.tick().await;
        if stack.db.count(&open).await == 0 {
            break;
        }
    }
    let all_ended = returned.elapsed().as_secs_f64();
    // Each task's end after the provider's return, from the database's clock: the return is
    // `all_ended` seconds before the read below.
    let rows = stack
        .db
        .client()
        .await
        .query(
            "SELECT status, extract(epoch FROM (now() - completed_at))::float8 FROM tasks WHERE app_id = $1",
            &[&TENANT],
        )
        .await?;
    let read_after = returned.elapsed().as_secs_f64();
    let mut after_return = Vec::new();
    let (mut succeeded, mut failed, mut open_left) = (0, 0, 0);
    for task in &rows {
        let status: String = task.get(0);
        match status.as_str() {
            "succeeded" => succeeded += 1,
            "failed" => failed += 1,
            _ => open_left += 1,
        }
        if let Some(ago) = task.get::<_, Option<f64>>(1) {
            after_return.push((read_after - ago).max(0.0));
        }
    }
    after_return.sort_by(f64::total_cmp);
    let (_, holds_after) = api.get("/v1/holds?state=released").await;
    let calls_total = stack.stub.calls();

    row("tasks succeeded / failed / still open", &[format!("{succeeded} / {failed} / {open_left}")]);
    row("failed during the outage", &[failed_during.to_string()]);
    row("provider calls during the outage (attempts counted)", &[format!("{calls_during} ({spent_during})")]);
    row("provider calls after its return", &[(calls_total - calls_during).to_string()]);
    row(
        "end after the return: p50 / max s",
        &[format!(
            "{:.1} / {:.1}",
            percentile(&after_return, 0.5),
            after_return.last().copied().unwrap_or(f64::NAN)
        )],
    );
    row("every task ended, s after the return", &[format!("{all_ended:.1}")]);
    Ok(json!({
        "tasks": tasks, "outageSeconds": outage.as_secs_f64(),
        "succeeded": succeeded, "failed": failed, "open": open_left, "failedDuringOutage": failed_during,
        "callsDuringOutage": calls_during, "attemptsCountedDuringOutage": spent_during,
        "callsAfterReturn": calls_total - calls_during,
        "endAfterReturnSeconds": {"p50": percentile(&after_return, 0.5), "max": after_return.last()},
        "allEndedSeconds": all_ended,
        "holdsDuringOutage": holds_during, "holdsReleased": holds_after,
    }))
}
