//! The per-task lifecycle (`lifecycle`): tasks a second through the shipped calls of one task
//! at a time ([`lifecycle::one_task`]) at 1, 4, 10, 16 and 64 clients, beside the floor (three
//! plain statements a task, pgbench) and the reference's statement sequence (pgbench), each on
//! the freshly reset database; at 1, 16 and 64 clients the cost of this system and of the floor
//! found ([`breakdown`]), and at 1 client the round trips a task beside the floor's 3.

use serde_json::{json, Value};

use crate::breakdown::{self, Breakdown, Runs};
use crate::size::Size;
use crate::{db, lifecycle, pgbench, row, Failure};

const CLIENTS: [usize; 5] = [1, 4, 10, 16, 64];
/// The points whose cost is found.
pub(crate) const COST_CLIENTS: [usize; 3] = [1, 16, 64];

/// The client counts (`BENCH_CLIENTS=64` narrows them, for profiling).
fn clients(size: Size) -> Vec<usize> {
    let chosen = std::env::var("BENCH_CLIENTS")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .filter(|list: &Vec<usize>| !list.is_empty())
        .unwrap_or_else(|| CLIENTS.to_vec());
    size.clients(&chosen)
}

pub(crate) async fn section(base: &str, size: Size, out: &std::path::Path) -> Result<Value, Failure> {
    let clients_list = clients(size);
    let cost_points = size.clients(&COST_CLIENTS);
    let duration = size.point(10, 3);
    let limit = size.pgbench(duration);
    let url = db::fresh_database(base, "aitasks_bench_lifecycle").await?;
    let floor_script = pgbench::script_file(out, "floor.sql", pgbench::FLOOR)?;
    let reference_script = pgbench::script_file(out, "reference.sql", pgbench::REFERENCE)?;
    let calls = if lifecycle::without_publish_mark() {
        "WHAT-IF, not the shipped path: create, claim, complete + event, no publish mark"
    } else {
        "the shipped calls: create, claim, complete + event, mark published"
    };
    println!("\nstore lifecycle: tasks/s, {:.1}s per point ({calls})", duration.as_secs_f64());
    let (mut ours, mut floor, mut reference) = (Vec::new(), Vec::new(), Vec::new());
    let mut costs: Vec<(Breakdown, Breakdown)> = Vec::new();
    for &clients in &clients_list {
        db::reset(&url).await?;
        let costed = cost_points.contains(&clients);
        let our_cost = if costed {
            Some(
                breakdown::measure(&url, clients, Runs::Here, lifecycle::run(&url, clients, duration))
                    .await?,
            )
        } else {
            None
        };
        ours.push(match &our_cost {
            Some(cost) => cost.tasks_per_second,
            None => lifecycle::run(&url, clients, duration).await?,
        });
        db::reset(&url).await?;
        let floor_run = pgbench::run_async(&url, &floor_script, clients, limit);
        match our_cost {
            Some(our_cost) => {
                let floor_cost = breakdown::measure(&url, clients, Runs::Elsewhere, floor_run).await?;
                floor.push(floor_cost.tasks_per_second);
                costs.push((our_cost, floor_cost));
            }
            None => floor.push(floor_run.await?),
        }
        db::connect(&url).await?.batch_execute(pgbench::REFERENCE_SETUP).await?;
        reference.push(pgbench::run_async(&url, &reference_script, clients, limit).await?);
    }
    let fmt = |v: &[f64]| v.iter().map(|x| format!("{x:.0}")).collect::<Vec<_>>();
    let ratio =
        |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| format!("{:.2}x", x / y)).collect::<Vec<_>>();
    row("clients", &clients_list.iter().map(|c| c.to_string()).collect::<Vec<_>>());
    row("this system (the shipped calls, event included)", &fmt(&ours));
    row("floor: 3 plain statements (pgbench)", &fmt(&floor));
    row("reference statement sequence (pgbench)", &fmt(&reference));
    row("ratio to the floor", &ratio(&ours, &floor));
    row("ratio to the reference", &ratio(&ours, &reference));
    if let Some((one, one_floor)) = costs.iter().find(|(cost, _)| cost.clients == 1) {
        println!(
            "round trips a task at 1 client: {:.2} (floor: 3; {:.2} received from pgbench's floor script)",
            one.statements_per_task(),
            one_floor.statements_per_task()
        );
    }
    println!("the cost of a task (pg_stat_statements, wait events, pg_stat_wal, this process's CPU):");
    for (ours, floor) in &costs {
        ours.print("this system");
        floor.print("floor");
    }
    let points: Vec<Value> = clients_list
        .iter()
        .enumerate()
        .map(|(i, clients)| {
            json!({"clients": clients, "tasksPerSecond": ours[i], "floor": floor[i], "reference": reference[i],
                   "ratioToFloor": ours[i] / floor[i], "ratioToReference": ours[i] / reference[i]})
        })
        .collect();
    let round_trips =
        costs.iter().find(|(cost, _)| cost.clients == 1).map(|(cost, _)| cost.statements_per_task());
    Ok(json!({
        "seconds": duration.as_secs_f64(), "points": points,
        "withoutPublishMark": lifecycle::without_publish_mark(),
        "roundTripsAtOneClient": round_trips, "floorRoundTrips": 3,
        "cost": costs.iter().map(|(ours, floor)| json!({"clients": ours.clients, "ours": ours.json(), "floor": floor.json()}))
            .collect::<Vec<_>>(),
    }))
}
