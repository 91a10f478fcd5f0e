//! Batches against one task at a time, on the same database in the same run:
//!
//! - creates at 64 clients: `create_task` per task (what the single create writes: the task is
//!   inserted already marked sent) beside `create_tasks` for 100 at a time, and the floor of one plain
//!   INSERT a task (pgbench);
//! - the lifecycle in batches of 10 through the shipped calls ([`lifecycle::batch_of_ten`]) at
//!   1, 16 and 64 clients beside the three-statement floor of `floor.sql`, each with its cost
//!   found ([`breakdown`]): statements a task (target ≤ 1.5) among it.

use aitasks_store as store;
use serde_json::{json, Value};

use crate::breakdown::{self, Breakdown, Runs};
use crate::lifecycle::{self, new_task};
use crate::size::Size;
use crate::{db, pgbench, row, Failure};

const CLIENTS: usize = 64;
const CREATE_BATCH: usize = 100;

pub(crate) const CREATE_FLOOR: &str = include_str!("../sql/create_floor.sql");

async fn single_create(client: store::Client, round: usize) -> Result<(store::Client, u64), Failure> {
    store::create_task(&client, &new_task("bench-app", format!("s-{round}"))).await?;
    Ok((client, 1))
}

async fn batch_create(client: store::Client, round: usize) -> Result<(store::Client, u64), Failure> {
    let tasks: Vec<_> = (0..CREATE_BATCH).map(|i| new_task("bench-app", format!("b-{round}-{i}"))).collect();
    let ids = created_ids(store::create_tasks(&client, "bench-app", &tasks).await?)?;
    Ok((client, ids.len() as u64))
}

fn created_ids(answers: Vec<store::StoreResult<store::Created>>) -> Result<Vec<uuid::Uuid>, Failure> {
    answers.into_iter().map(|a| Ok(a?.task().id)).collect()
}

pub(crate) async fn section(base: &str, size: Size, out: &std::path::Path) -> Result<Value, Failure> {
    let duration = size.point(10, 3);
    let limit = size.pgbench(duration);
    let clients = size.client_count(CLIENTS);
    let url = db::fresh_database(base, "aitasks_bench_batches").await?;
    let create_floor_script = pgbench::script_file(out, "create_floor.sql", CREATE_FLOOR)?;
    let floor_script = pgbench::script_file(out, "floor.sql", pgbench::FLOOR)?;
    println!("\nbatches: tasks/s, {:.1}s per point", duration.as_secs_f64());

    db::reset(&url).await?;
    let single = lifecycle::drive(&url, clients, duration, single_create).await?;
    db::reset(&url).await?;
    let batched = lifecycle::drive(&url, clients, duration, batch_create).await?;
    db::reset(&url).await?;
    let create_floor = pgbench::run_async(&url, &create_floor_script, clients, limit).await?;
    row(&format!("creates at {clients} clients"), &["tasks/s".into(), "× single".into(), "× floor".into()]);
    row(
        "create one at a time",
        &[format!("{single:.0}"), "1.00x".into(), format!("{:.2}x", single / create_floor)],
    );
    row(
        &format!("create {CREATE_BATCH} a call (targets ≥ 5x, ≥ 2x)"),
        &[
            format!("{batched:.0}"),
            format!("{:.2}x", batched / single),
            format!("{:.2}x", batched / create_floor),
        ],
    );
    row(
        "floor: one plain INSERT a task (pgbench)",
        &[format!("{create_floor:.0}"), format!("{:.2}x", create_floor / single), "1.00x".into()],
    );

    let mut points: Vec<(Breakdown, Breakdown)> = Vec::new();
    for clients in size.clients(&crate::per_task::COST_CLIENTS) {
        db::reset(&url).await?;
        let ours =
            breakdown::measure(&url, clients, Runs::Here, lifecycle::run_batches(&url, clients, duration))
                .await?;
        db::reset(&url).await?;
        let floor_run = pgbench::run_async(&url, &floor_script, clients, limit);
        let floor = breakdown::measure(&url, clients, Runs::Elsewhere, floor_run).await?;
        points.push((ours, floor));
    }
    let batch = lifecycle::BATCH;
    row(
        &format!("lifecycle in batches of {batch}"),
        &["clients".into(), "tasks/s".into(), "floor".into(), "× floor".into(), "stmts/task".into()],
    );
    for (ours, floor) in &points {
        row(
            "",
            &[
                ours.clients.to_string(),
                format!("{:.0}", ours.tasks_per_second),
                format!("{:.0}", floor.tasks_per_second),
                format!("{:.2}x", ours.tasks_per_second / floor.tasks_per_second),
                format!("{:.2}", ours.statements_per_task()),
            ],
        );
    }
    println!("the cost of a task in batches of {batch}:");
    for (ours, floor) in &points {
        ours.print(&format!("batches of {batch}"));
        floor.print("floor");
    }
    let lifecycle: Vec<Value> = points
        .iter()
        .map(|(ours, floor)| {
            json!({"clients": ours.clients, "tasksPerSecond": ours.tasks_per_second, "floor": floor.tasks_per_second,
                   "ratioToFloor": ours.tasks_per_second / floor.tasks_per_second,
                   "statementsPerTask": ours.statements_per_task(),
                   "cost": {"ours": ours.json(), "floor": floor.json()}})
        })
        .collect();
    Ok(json!({
        "clients": clients, "seconds": duration.as_secs_f64(),
        "create": {"single": single, "batched": batched, "batchSize": CREATE_BATCH, "floor": create_floor,
                   "ratioToSingle": batched / single, "ratioToFloor": batched / create_floor},
        "lifecycle": {"batchSize": batch, "points": lifecycle},
    }))
}
