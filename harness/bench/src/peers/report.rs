//! The section's table, JSON and picture from each system's outcome.

use serde_json::{json, Value};

use super::measure;
use super::phase::{Fault, Phase};
use super::plan::Plan;
use super::plot::{self, Bars};
use super::systems::System;
use crate::row;

/// Everything measured of one system, or why it was not.
pub(crate) struct Outcome {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) not_installed: Option<String>,
    pub(crate) fixed: Vec<Phase>,
    pub(crate) ladder: Vec<Phase>,
    pub(crate) chaos: Vec<(Fault, Phase)>,
    /// The highest dead tuples and bytes during each chaos cell.
    pub(crate) chaos_tables: Vec<(i64, i64)>,
    /// (epoch ms, dead tuples, bytes) every 2 s over the whole run.
    pub(crate) tables: Option<Vec<(i64, i64, i64)>>,
    /// Where and why its run stopped before the plan's end (workers that never became ready).
    pub(crate) stopped: Option<String>,
}

impl Outcome {
    pub(crate) fn new(system: &System) -> Outcome {
        Outcome {
            name: system.name.into(),
            version: system.version.clone(),
            not_installed: None,
            fixed: Vec::new(),
            ladder: Vec::new(),
            chaos: Vec::new(),
            chaos_tables: Vec::new(),
            tables: None,
            stopped: None,
        }
    }

    pub(crate) fn not_installed(name: &str, why: &str) -> Outcome {
        Outcome {
            name: name.into(),
            version: String::new(),
            not_installed: Some(why.into()),
            fixed: Vec::new(),
            ladder: Vec::new(),
            chaos: Vec::new(),
            chaos_tables: Vec::new(),
            tables: None,
            stopped: None,
        }
    }

    /// The highest ladder rate sustained, and the completions a second at it; `None` when the
    /// first step already failed (or there was no ladder).
    pub(crate) fn sustained(&self) -> Option<(f64, f64)> {
        self.ladder.iter().filter(|s| s.sustained).map(|s| (s.rate, s.throughput)).next_back()
    }

    fn max_tables(&self) -> Option<(i64, i64)> {
        let samples = self.tables.as_ref()?;
        Some(samples.iter().fold((0, 0), |(d, b), (_, dead, bytes)| (d.max(*dead), b.max(*bytes))))
    }
}

/// A chaos cell: `ok <recovery>s` when every job completed exactly once (`ok, slow`: the
/// completion rate was not back at the producer's before it stopped), else what failed.
fn cell(phase: &Phase) -> String {
    let t = phase.tally;
    if phase.crashed {
        "crashed".into()
    } else if t.lost > 0 {
        format!("{} lost", t.lost)
    } else if t.twice > 0 {
        format!("{} twice", t.twice)
    } else {
        match phase.recovery {
            Some(s) => format!("ok {s:.0}s"),
            None => "ok, slow".into(),
        }
    }
}

pub(crate) fn print(outcomes: &[Outcome], hop: Option<&Outcome>, plan: &Plan) {
    let header = [
        "workers",
        "jobs/s",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "dead max",
        "MB max",
        "kill",
        "pg restart",
        "long tx",
    ];
    row("system (pickup at the fixed rate, worst window)", &header.map(String::from));
    for outcome in outcomes.iter().chain(hop) {
        if let Some(why) = &outcome.not_installed {
            println!("{:<46}not installed: {why}", outcome.name);
            continue;
        }
        let tables = outcome.max_tables();
        for phase in &outcome.fixed {
            let w = phase.worst();
            let on_ladder = phase.workers == plan.ladder_workers;
            let sustained = match (on_ladder, outcome.sustained()) {
                (true, Some((rate, _))) => format!("{rate:.0}"),
                (true, None) if !outcome.ladder.is_empty() => format!("<{:.0}", outcome.ladder[0].rate),
                _ => "-".into(),
            };
            let mut figures = vec![
                phase.workers.to_string(),
                sustained,
                format!("{:.0}", w.p50),
                format!("{:.0}", w.p95),
                format!("{:.0}", w.p99),
                tables.map_or("-".into(), |(d, _)| d.to_string()),
                tables.map_or("-".into(), |(_, b)| format!("{:.1}", b as f64 / 1e6)),
            ];
            for fault in [Fault::KillWorkers, Fault::RestartPostgres, Fault::LongTransaction] {
                let found = outcome.chaos.iter().find(|(f, _)| *f == fault).filter(|_| on_ladder);
                figures.push(found.map_or("-".into(), |(_, p)| cell(p)));
            }
            if !phase.tally.exact() {
                figures.push(format!("(fixed rate: {} lost, {} 2x)", phase.tally.lost, phase.tally.twice));
            }
            row(&format!("{} {}", outcome.name, outcome.version), &figures);
        }
    }
    for outcome in outcomes.iter().filter(|o| o.stopped.is_some()) {
        println!("  {}: its run stopped at {}", outcome.name, outcome.stopped.as_deref().unwrap_or_default());
    }
    // Where this system's pickup goes (and the SQS hop's, which has no claim), at the fixed rate
    // and on each ladder step.
    for outcome in outcomes.iter().chain(hop) {
        for phase in outcome.fixed.iter().chain(&outcome.ladder) {
            if let Some(parts) = &phase.parts {
                println!(
                    "  {} pickup in parts, {:.0} jobs/s, {} workers: {}",
                    outcome.name,
                    phase.rate,
                    phase.workers,
                    parts.line()
                );
            }
        }
    }
}

fn phase_list(phases: &[Phase]) -> Vec<Value> {
    phases.iter().map(Phase::json).collect()
}

pub(crate) fn json(outcomes: &[Outcome], hop: Option<&Outcome>, plan: &Plan) -> Value {
    let one = |o: &Outcome| {
        json!({
            "system": o.name, "version": o.version, "notInstalled": o.not_installed, "stopped": o.stopped,
            "fixed": phase_list(&o.fixed), "ladder": phase_list(&o.ladder),
            "sustainedRate": o.sustained().map(|s| s.0), "sustainedThroughput": o.sustained().map(|s| s.1),
            "chaos": o.chaos.iter().zip(o.chaos_tables.iter().map(Some).chain(std::iter::repeat(None)))
                .map(|((fault, p), tables)| json!({"cell": fault.name(), "pass": p.tally.exact() && !p.crashed, "phase": p.json(),
                                                   "deadTuplesMax": tables.map(|t| t.0), "bytesMax": tables.map(|t| t.1)}))
                .collect::<Vec<_>>(),
            "tables": o.tables.as_ref().map(|s| s.iter().map(|(t, d, b)| json!([t, d, b])).collect::<Vec<_>>()),
        })
    };
    json!({
        "method": "github.com/hardbyte/postgresql-job-queue-benchmarking docs/method.md, rebuilt natively",
        "fixedRate": plan.fixed_rate, "fixedSeconds": plan.fixed_seconds, "windowSeconds": plan.window.as_secs(),
        "ladder": plan.ladder, "stepSeconds": plan.step_seconds, "chaosSeconds": plan.chaos_seconds,
        "systems": outcomes.iter().map(one).collect::<Vec<_>>(),
        "sqsHop": hop.map(one),
    })
}

/// The picture of a past run, from the section's JSON (`latest.json`'s `peers`), its ladder
/// judged again by the current [`measure::kept_pace`].
pub(crate) fn picture_of(report: &Value) -> Option<String> {
    let bars: Vec<Bars> = report["systems"]
        .as_array()?
        .iter()
        .filter(|s| s["notInstalled"].is_null())
        .map(|s| {
            let phases = |key: &str| s[key].as_array().cloned().unwrap_or_default();
            let sustained = phases("ladder")
                .iter()
                .take_while(|p| {
                    let (rate, throughput) =
                        (p["rate"].as_f64().unwrap_or(0.0), p["throughput"].as_f64().unwrap_or(0.0));
                    p["sustained"] == true && measure::kept_pace(rate, throughput)
                })
                .filter_map(|p| p["rate"].as_f64())
                .last();
            Bars {
                name: s["system"].as_str().unwrap_or("?").into(),
                p99: phases("fixed")
                    .iter()
                    .map(|p| {
                        (
                            p["workers"].as_u64().unwrap_or(0) as usize,
                            p["pickupMs"]["p99"].as_f64().unwrap_or(0.0),
                        )
                    })
                    .collect(),
                sustained,
            }
        })
        .collect();
    let workers = report["systems"][0]["ladder"][0]["workers"].as_u64().unwrap_or(0);
    let caption = format!(
        "pickup p99 at {} jobs/s (worst {} s window); sustained: highest rate of {} kept up with by {workers} workers; same Postgres, same machine",
        report["fixedRate"], report["windowSeconds"], report["ladder"]
    );
    Some(plot::svg(&bars, &caption))
}

pub(crate) fn picture(outcomes: &[Outcome], plan: &Plan) -> String {
    let bars: Vec<Bars> = outcomes
        .iter()
        .filter(|o| o.not_installed.is_none())
        .map(|o| Bars {
            name: o.name.clone(),
            p99: o.fixed.iter().map(|p| (p.workers, p.worst().p99)).collect(),
            sustained: o.sustained().map(|s| s.0),
        })
        .collect();
    let caption = format!(
        "pickup p99 at {} jobs/s (worst {} s window); sustained: highest rate of {:?} kept up with by {} workers; same Postgres, same machine",
        plan.fixed_rate,
        plan.window.as_secs(),
        plan.ladder,
        plan.ladder_workers
    );
    plot::svg(&bars, &caption)
}
