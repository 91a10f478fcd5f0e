//! The per-task lifecycle (`lifecycle`): tasks a second through the shipped calls of one task
//! at a time ([`lifecycle::one_task`]) at 1, 4, 10, 16 and 64 clients, beside the floor (three
//! plain statements a task, pgbench) and the reference's statement sequence (pgbench), each on
//! the freshly reset database; at 1, 16 and 64 clients the cost of this system and of the floor
//! found ([`breakdown`]), and at 1 client the round trips a task beside the floor's 3.
//!
//! Each point runs [`trials`] times, this system then the floor, and the trial whose ratio is the
//! median is the point's figure (its two rates and their ratio); the reference runs once, after
//! the trials, and the costs are the first trial's.

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
    let calls = if lifecycle::with_publish_mark() {
        "WHAT-IF, not the shipped path: as before V41, create, claim, complete + event, mark published"
    } else {
        "the shipped calls: create, claim, complete + event handed over to the publish"
    };
    println!("\nstore lifecycle: tasks/s, {:.1}s per point ({calls})", duration.as_secs_f64());
    let trials = trials(size);
    let (mut ours, mut floor, mut reference) = (Vec::new(), Vec::new(), Vec::new());
    let mut paired: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut costs: Vec<(Breakdown, Breakdown)> = Vec::new();
    for &clients in &clients_list {
        let mut runs = Vec::with_capacity(trials);
        for trial in 0..trials {
            // One breakdown a cost point: the counters it reads, and the sampler beside the run,
            // stay out of the other trials.
            let costed = trial == 0 && cost_points.contains(&clients);
            let (pair, cost) = trial_pair(&url, clients, duration, limit, &floor_script, costed).await?;
            runs.push(pair);
            costs.extend(cost);
        }
        let (ours_rate, floor_rate) = median_trial(&runs);
        ours.push(ours_rate);
        floor.push(floor_rate);
        paired.push(runs);
        db::connect(&url).await?.batch_execute(pgbench::REFERENCE_SETUP).await?;
        reference.push(pgbench::run_async(&url, &reference_script, clients, limit).await?);
    }
    // The median trial, not one pair (this system, then the floor, on the same reset database a
    // few seconds apart): at 64 clients the floor alone moved from 1,157 to 1,455 tasks a second
    // in eight runs on this machine (BENCHMARKS.md), so one pair's ratio is a draw.
    let ratios: Vec<f64> = ours.iter().zip(&floor).map(|(o, f)| o / f).collect();
    let fmt = |v: &[f64]| v.iter().map(|x| format!("{x:.0}")).collect::<Vec<_>>();
    let ratio =
        |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| format!("{:.2}x", x / y)).collect::<Vec<_>>();
    row("clients", &clients_list.iter().map(|c| c.to_string()).collect::<Vec<_>>());
    row("this system (the shipped calls, event included)", &fmt(&ours));
    row("floor: 3 plain statements (pgbench)", &fmt(&floor));
    row("reference statement sequence (pgbench)", &fmt(&reference));
    row(
        &format!("ratio to the floor (the median of {trials} trial{})", if trials == 1 { "" } else { "s" }),
        &ratios.iter().map(|r| format!("{r:.2}x")).collect::<Vec<_>>(),
    );
    if trials > 1 {
        for (clients, runs) in clients_list.iter().zip(&paired) {
            let each: Vec<String> =
                runs.iter().map(|(o, f)| format!("{o:.0}/{f:.0} = {:.2}x", o / f)).collect();
            println!(
                "  trials at {clients} client{}: {}",
                if *clients == 1 { "" } else { "s" },
                each.join(", ")
            );
        }
    }
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
                   "ratioToFloor": ratios[i], "ratioToReference": ours[i] / reference[i],
                   "trials": paired[i].iter().map(|(o, f)| json!({"tasksPerSecond": o, "floor": f})).collect::<Vec<_>>()})
        })
        .collect();
    let round_trips =
        costs.iter().find(|(cost, _)| cost.clients == 1).map(|(cost, _)| cost.statements_per_task());
    Ok(json!({
        "seconds": duration.as_secs_f64(), "trials": trials, "points": points,
        "withPublishMark": lifecycle::with_publish_mark(),
        "roundTripsAtOneClient": round_trips, "floorRoundTrips": 3,
        "cost": costs.iter().map(|(ours, floor)| json!({"clients": ours.clients, "ours": ours.json(), "floor": floor.json()}))
            .collect::<Vec<_>>(),
    }))
}

/// How many times each point runs, this system then the floor each time: 3 in a full run, 1 in
/// a quick or smoke one; `BENCH_TRIALS` sets it, from 1 to 9 (a 10-second point with its resets
/// is about 25 s a trial, so 9 trials of five client counts is already 20 minutes).
fn trials(size: Size) -> usize {
    std::env::var("BENCH_TRIALS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|n: &usize| (1..=9).contains(n))
        .unwrap_or_else(|| size.pick(3, 1, 1))
}

/// One trial of a point: this system's tasks a second, then the floor's, each on the freshly
/// reset database; with their costs found when `costed`.
async fn trial_pair(
    url: &str,
    clients: usize,
    duration: std::time::Duration,
    limit: pgbench::Limit,
    floor_script: &std::path::Path,
    costed: bool,
) -> Result<((f64, f64), Option<(Breakdown, Breakdown)>), Failure> {
    db::reset(url).await?;
    let ours = if costed {
        Some(breakdown::measure(url, clients, Runs::Here, lifecycle::run(url, clients, duration)).await?)
    } else {
        None
    };
    let ours_rate = match &ours {
        Some(cost) => cost.tasks_per_second,
        None => lifecycle::run(url, clients, duration).await?,
    };
    db::reset(url).await?;
    let floor_run = pgbench::run_async(url, floor_script, clients, limit);
    Ok(match ours {
        Some(ours) => {
            let floor = breakdown::measure(url, clients, Runs::Elsewhere, floor_run).await?;
            ((ours_rate, floor.tasks_per_second), Some((ours, floor)))
        }
        None => ((ours_rate, floor_run.await?), None),
    })
}

/// The trial (this system's rate, the floor's) whose ratio is the median: the lower of the two
/// middle ones for an even count, so that the figure is always one measured pair.
fn median_trial(runs: &[(f64, f64)]) -> (f64, f64) {
    let mut sorted = runs.to_vec();
    sorted.sort_by(|(o1, f1), (o2, f2)| (o1 / f1).total_cmp(&(o2 / f2)));
    sorted.get(sorted.len().saturating_sub(1) / 2).copied().unwrap_or((f64::NAN, f64::NAN))
}

#[cfg(test)]
mod tests {
    use super::median_trial;

    #[test]
    fn the_figure_is_the_pair_whose_ratio_is_the_median() {
        // Ratios 0.70, 0.75 and 0.64: the pair of 0.70, not a median of each column (900/1200).
        let runs = [(910.0, 1300.0), (900.0, 1200.0), (800.0, 1250.0)];
        assert_eq!(median_trial(&runs), (910.0, 1300.0));
        // An even count: the lower of the two middle pairs.
        assert_eq!(median_trial(&[(1.0, 1.0), (3.0, 4.0)]), (3.0, 4.0));
        assert_eq!(median_trial(&[(5.0, 10.0)]), (5.0, 10.0));
        assert!(median_trial(&[]).0.is_nan());
    }
}
