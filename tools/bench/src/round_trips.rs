//! Round trips per task on the happy path, counted from the statements the server received
//! (`pg_stat_statements`), for this system and for the reference's statement sequence.

use serde_json::{json, Value};

use aitasks_store::{self as store, PoolSettings};

use crate::{db, lifecycle, pgbench, row, Failure};

const TASKS: u64 = 200;

pub(crate) async fn section(base: &str, out: &std::path::Path) -> Result<Value, Failure> {
    let name = "aitasks_bench_round_trips";
    let url = db::fresh_database(base, name).await?;
    let mut settings = PoolSettings::new(&url);
    settings.max_size = 1;
    let pool = store::connect(&settings)?;
    let client = pool.get().await?;
    // Warm the statement cache first: a Lambda instance prepares once, then reuses.
    lifecycle::one_task(&client, "warm".into()).await?;
    db::reset_statements(&url, name).await?;
    for n in 0..TASKS {
        lifecycle::one_task(&client, format!("rt-{n}")).await?;
    }
    let ours = db::statements_seen(&url, name).await? as f64 / TASKS as f64;

    db::connect(&url).await?.batch_execute(pgbench::REFERENCE_SETUP).await?;
    let script = pgbench::script_file(out, "reference.sql", pgbench::REFERENCE)?;
    db::reset_statements(&url, name).await?;
    pgbench::run(&url, &script, 1, pgbench::Limit::Transactions(TASKS))?;
    let reference = db::statements_seen(&url, name).await? as f64 / TASKS as f64;

    println!("\nround trips per task on the happy path (statements received, {TASKS} tasks)");
    row("this system", &[format!("{ours:.2}")]);
    row("reference statement sequence", &[format!("{reference:.2}")]);
    Ok(json!({"tasks": TASKS, "ours": ours, "reference": reference}))
}
