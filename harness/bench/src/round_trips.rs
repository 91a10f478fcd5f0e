//! Round trips per task on the happy path, counted from the statements the server received
//! (`pg_stat_statements`), for this system (the shipped calls of [`lifecycle::one_task`]) and
//! for the reference's statement sequence.

use serde_json::{json, Value};

use aitasks_store::{self as store, PoolSettings};

use crate::size::Size;
use crate::{db, lifecycle, pgbench, row, Failure};

pub(crate) async fn section(base: &str, size: Size, out: &std::path::Path) -> Result<Value, Failure> {
    let tasks: u64 = size.pick(200, 200, 5);
    let name = "aitasks_bench_round_trips";
    let url = db::fresh_database(base, name).await?;
    let mut settings = PoolSettings::new(&url);
    settings.max_size = 1;
    let pool = store::connect(&settings)?;
    let client = pool.get().await?;
    // Warm the statement cache first: a Lambda instance prepares once, then reuses.
    lifecycle::one_task(&client, "warm".into()).await?;
    db::reset_statements(&url, name).await?;
    for n in 0..tasks {
        lifecycle::one_task(&client, format!("rt-{n}")).await?;
    }
    let ours = db::statements_seen(&url, name).await? as f64 / tasks as f64;

    db::connect(&url).await?.batch_execute(pgbench::REFERENCE_SETUP).await?;
    let script = pgbench::script_file(out, "reference.sql", pgbench::REFERENCE)?;
    db::reset_statements(&url, name).await?;
    pgbench::run(&url, &script, 1, pgbench::Limit::Transactions(tasks))?;
    let reference = db::statements_seen(&url, name).await? as f64 / tasks as f64;

    println!("\nround trips per task on the happy path (statements received, {tasks} tasks)");
    row("this system", &[format!("{ours:.2}")]);
    row("reference statement sequence", &[format!("{reference:.2}")]);
    Ok(json!({"tasks": tasks, "ours": ours, "reference": reference}))
}
