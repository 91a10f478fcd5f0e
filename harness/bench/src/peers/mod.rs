//! The peers by the public cross-queue method (github.com/hardbyte/postgresql-job-queue-benchmarking,
//! `docs/method.md` and its adapters' protocol), rebuilt natively in our own code: for each
//! system, on a fresh database of the bench's Postgres, a producer inserting at a fixed rate
//! (credited on the wall clock) and N workers (the same N for every system); each worker reports
//! every job run with its insert time and its start, from which the section computes pickup
//! latency (insert to worker start) p50/p95/p99 per 30 s window; a ladder of rates finds the
//! highest each sustains (every job completed, pickup p99 not growing over the step); the
//! system's tables' dead tuples and size are sampled every 2 s; and the chaos cells (workers
//! SIGKILLed, Postgres restarted, a long transaction holding back vacuum) pass when every
//! produced job completed exactly once (counted by job id), with the seconds until the
//! completion rate was back at the producer's.
//!
//! This system runs as its functions do (see [`aitasks`]): the task id reaches the worker
//! through the SQS-compatible server, a hop measured alone as its own row ([`sqs_hop`]). The
//! peers (graphile-worker and pg-boss from npm, procrastinate, awa and absurd from PyPI) are
//! installed by `scripts/peer.sh` from the lockfiles in `harness/bench/<peer>/`; one that does not
//! install is printed `not installed` with the reason, and has no figures.

mod aitasks;
mod measure;
mod pace;
mod parts;
mod phase;
mod plan;
mod plot;
mod process;
mod report;
mod sqs_hop;
mod systems;
mod tables;

use serde_json::Value;
use std::path::Path;

use crate::size::Size;
use crate::{db, Failure};
use phase::Runner;
use plan::Plan;
use report::Outcome;
use systems::{Launch, System};

/// A role of this binary's adapters (`BENCH_PEER_ROLE`), started by the section as a process of
/// its own; `None` when the variable is not set.
pub(crate) async fn role() -> Option<Result<(), Failure>> {
    let role = std::env::var("BENCH_PEER_ROLE").ok()?;
    Some(match role.as_str() {
        "aitasks-produce" => aitasks::produce().await,
        "aitasks-work" => aitasks::work().await,
        "aitasks-sweep" => aitasks::sweep().await,
        "sqs-produce" => sqs_hop::produce().await,
        "sqs-work" => sqs_hop::work().await,
        // The picture of a past run again (BENCH_PEERS_JSON: its latest.json) into docs/bench.
        "replot" => replot(),
        other => Err(format!("no such role: {other}").into()),
    })
}

fn replot() -> Result<(), Failure> {
    let path = std::env::var("BENCH_PEERS_JSON").map_err(|_| "BENCH_PEERS_JSON is not set")?;
    let report: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let picture = report::picture_of(&report["peers"]).ok_or("no peers section in that file")?;
    std::fs::write(aitasks_testkit::workspace_root().join("docs/bench/peers.svg"), picture)?;
    Ok(())
}

/// This system, or the SQS hop alone, with a queue of its own (visibility 5 s), a new one each
/// phase ([`Runner`]).
async fn own(
    name: &'static str,
    prefix: &'static str,
    tables: Option<&'static str>,
) -> Result<System, Failure> {
    let endpoint =
        aitasks_testkit::try_local_env("AWS_ENDPOINT_URL_SQS").ok_or("AWS_ENDPOINT_URL_SQS is not set")?;
    // Its queue is made by each phase (`Runner`'s fresh queue), which sets QUEUE_URL.
    Ok(System {
        name,
        version: env!("CARGO_PKG_VERSION").into(),
        launch: Launch::OwnBinary(prefix),
        tables,
        migrated: tables.is_some(),
        chaos: tables.is_some(),
        env: vec![("SQS_ENDPOINT".into(), endpoint), ("QUEUE_URL".into(), String::new())],
    })
}

async fn database(base: &str, system: &System) -> Result<String, Failure> {
    let name = format!("aitasks_bench_peer_{}", system.name.replace(['-', ' '], "_"));
    if system.migrated {
        return db::fresh_database(base, &name).await;
    }
    let admin = db::connect(&db::with_database(base, "postgres")).await?;
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await?;
    admin.batch_execute(&format!("CREATE DATABASE {name}")).await?;
    Ok(db::with_database(base, &name))
}

/// Every phase of the plan for one system.
async fn run_system(base: &str, system: System, plan: &Plan, out: &Path) -> Result<Outcome, Failure> {
    let url = database(base, &system).await?;
    let log = out.join(format!("peers-{}.log", system.name.replace(' ', "-")));
    let _ = std::fs::remove_file(&log);
    let sampler = system.tables.map(|condition| tables::Sampler::start(url.clone(), condition));
    let mut runner = Runner::new(system.clone(), url, log, plan.window, plan.drain);
    let mut outcome = Outcome::new(&system);
    // A phase that cannot run (its workers never said they were ready) ends this system's run,
    // said in the table, and the section goes on with the next system.
    let stopped = |outcome: &mut Outcome, phase: String, e: Failure| {
        println!("    ({}: the run stopped at {phase}: {e})", outcome.name);
        outcome.stopped = Some(format!("{phase}: {e}"));
    };
    'phases: {
        for &workers in &plan.fixed_workers {
            match runner.run(workers, plan.fixed_rate, plan.fixed_seconds, None).await {
                Ok(phase) => outcome.fixed.push(phase),
                Err(e) => {
                    stopped(&mut outcome, format!("{} jobs/s, {workers} workers", plan.fixed_rate), e);
                    break 'phases;
                }
            }
        }
        for &rate in &plan.ladder {
            let step = match runner.run(plan.ladder_workers, rate, plan.step_seconds, None).await {
                Ok(step) => step,
                Err(e) => {
                    stopped(&mut outcome, format!("the ladder's {rate} jobs/s"), e);
                    break 'phases;
                }
            };
            let kept_up = step.sustained;
            outcome.ladder.push(step);
            if !kept_up {
                break;
            }
        }
        if system.chaos {
            for &fault in &plan.chaos {
                let cell = match runner
                    .run(plan.ladder_workers, plan.fixed_rate, plan.chaos_seconds, Some(fault))
                    .await
                {
                    Ok(cell) => cell,
                    Err(e) => {
                        stopped(&mut outcome, format!("the chaos cell {}", fault.name()), e);
                        break 'phases;
                    }
                };
                if let Some(sampler) = &sampler {
                    outcome.chaos_tables.push(sampler.max_between(cell.from_ms, cell.to_ms));
                }
                outcome.chaos.push((fault, cell));
            }
        }
    }
    if let Some(sampler) = sampler {
        outcome.tables = Some(sampler.finish());
    }
    Ok(outcome)
}

/// Which systems run (`BENCH_PEERS=a,b`, by name: aitasks, graphile-worker, pg-boss,
/// procrastinate, awa, absurd); every one when the variable is unset or empty.
fn selection() -> impl Fn(&str) -> bool {
    let names: Vec<String> = std::env::var("BENCH_PEERS")
        .unwrap_or_default()
        .split(',')
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .collect();
    move |name| names.is_empty() || names.iter().any(|n| n == name)
}

pub(crate) async fn section(base: &str, size: Size, out: &Path) -> Result<Value, Failure> {
    let plan = Plan::of(size);
    println!(
        "\npeers, by the public cross-queue method: a producer at {} jobs/s for {} s with {:?} workers, a ladder of \
         {:?} jobs/s ({} s a step, {} workers), chaos cells of {} s; pickup = insert to worker start, per {} s window",
        plan.fixed_rate,
        plan.fixed_seconds,
        plan.fixed_workers,
        plan.ladder,
        plan.step_seconds,
        plan.ladder_workers,
        plan.chaos_seconds,
        plan.window.as_secs()
    );
    let wanted = selection();
    let mut candidates = Vec::new();
    if wanted("aitasks") {
        candidates.push(Ok(own("aitasks", "aitasks", Some("schemaname = 'public'")).await?));
    }
    if plan.peers {
        candidates.extend(systems::peers(&wanted));
    }
    let mut outcomes = Vec::new();
    for candidate in candidates {
        match candidate {
            Ok(system) => {
                println!("  running {} {} ...", system.name, system.version);
                outcomes.push(run_system(base, system, &plan, out).await?);
            }
            Err((name, why)) => outcomes.push(Outcome::not_installed(name, &why)),
        }
    }
    // The SQS hop is this system's reference row: run with it.
    let hop = match wanted("aitasks") {
        true => Some(run_system(base, own("SQS hop alone", "sqs", None).await?, &plan, out).await?),
        false => None,
    };
    report::print(&outcomes, hop.as_ref(), &plan);
    let picture = report::picture(&outcomes, &plan);
    std::fs::write(out.join("peers.svg"), &picture)?;
    if size == Size::Full {
        let committed = aitasks_testkit::workspace_root().join("docs/bench/peers.svg");
        std::fs::create_dir_all(committed.parent().ok_or("docs/bench")?)?;
        std::fs::write(&committed, &picture)?;
        println!("picture: {}", committed.display());
    }
    Ok(report::json(&outcomes, hop.as_ref(), &plan))
}
