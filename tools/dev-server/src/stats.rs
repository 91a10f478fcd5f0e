//! `aitasks-dev-server stats` (`make stats`): the live figures a person wants while the demo or a
//! load runs: tasks by status, the task queue's depth, and over the last hour the provider's
//! latency percentiles and the tokens spent.

use std::time::Duration;

use aitasks_runtime::App;

type Failure = Box<dyn std::error::Error + Send + Sync>;

const WINDOW: Duration = Duration::from_secs(60 * 60);

pub(crate) async fn print(app: &App) -> Result<(), Failure> {
    let client = aitasks_store::client(&app.pool).await.map_err(|e| aitasks_runtime::error_chain(&e))?;
    let overview =
        aitasks_store::overview(&client, WINDOW).await.map_err(|e| aitasks_runtime::error_chain(&e))?;
    let statuses = ["queued", "running", "succeeded", "failed", "canceled"]
        .map(|status| format!("{status} {}", overview.by_status.get(status).copied().unwrap_or(0)))
        .join("  ");
    println!("tasks        {statuses}");
    match app.queues.task_queue_depth().await {
        Ok(depth) => println!("task queue   {depth} messages (visible, in flight and delayed)"),
        Err(error) => println!("task queue   unknown ({error})"),
    }
    let ms = |value: Option<f64>| value.map_or_else(|| "-".to_owned(), |v| format!("{v:.0} ms"));
    println!(
        "last hour    {} succeeded; provider latency p50 {}, p99 {}; tokens in {}, out {}",
        overview.recent,
        ms(overview.latency_p50_ms),
        ms(overview.latency_p99_ms),
        overview.input_tokens,
        overview.output_tokens
    );
    Ok(())
}
