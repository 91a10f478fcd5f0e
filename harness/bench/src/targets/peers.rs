//! The peers' targets (issue 51), read from the peers section's report: at equal worker counts,
//! ahead of every peer on sustained throughput and on pickup p99, and every chaos cell passed
//! with nothing lost and nothing settled twice, its recovery time given.

use serde_json::Value;

use super::verdict::Target;

/// This system's name in the section's report.
const OURS: &str = "aitasks";

fn installed(report: &Value) -> Vec<&Value> {
    report["peers"]["systems"]
        .as_array()
        .map(|systems| systems.iter().filter(|s| s["notInstalled"].is_null()).collect())
        .unwrap_or_default()
}

fn label(system: &Value) -> String {
    let name = system["system"].as_str().unwrap_or("?");
    match system["version"].as_str().filter(|v| !v.is_empty() && name != OURS) {
        Some(version) => format!("{name} {version}"),
        None => name.to_owned(),
    }
}

/// The ladder's step at `rate`: its completions a second.
fn throughput_at(system: &Value, rate: f64) -> Option<f64> {
    system["ladder"].as_array()?.iter().find(|s| s["rate"].as_f64() == Some(rate))?["throughput"].as_f64()
}

/// The first ladder rate above `rate`.
fn next_rate(system: &Value, rate: f64) -> Option<f64> {
    system["ladder"].as_array()?.iter().filter_map(|s| s["rate"].as_f64()).find(|r| *r > rate)
}

/// Ahead on sustained throughput: a higher rate kept; at the same rate kept, more completions a
/// second at the next step, which neither kept (the ladder's steps cannot place them otherwise).
fn throughput(ours: &Value, peer: &Value) -> Target {
    let text = format!("sustained throughput ahead of {}", label(peer));
    // No step kept is a rate of 0: below the ladder's first step.
    let (a, b) =
        (ours["sustainedRate"].as_f64().unwrap_or(0.0), peer["sustainedRate"].as_f64().unwrap_or(0.0));
    if ours["ladder"].as_array().is_none_or(Vec::is_empty)
        || peer["ladder"].as_array().is_none_or(Vec::is_empty)
    {
        return Target::new(text, None, None);
    }
    if a != b {
        return Target::new(text, Some(format!("kept {a:.0} vs {b:.0} jobs/s")), Some(a > b));
    }
    let beyond = next_rate(ours, a).and_then(|r| Some((r, throughput_at(ours, r)?, throughput_at(peer, r)?)));
    match beyond {
        Some((rate, x, y)) => Target::new(
            text,
            Some(format!("both kept {a:.0}; at {rate:.0}: {x:.0} vs {y:.0}/s")),
            Some(x > y),
        ),
        None => Target::new(text, Some(format!("both kept the ladder's top, {a:.0} jobs/s")), None),
    }
}

/// A fixed-rate phase's p99, or why it cannot be compared: a phase that lost jobs or crashed
/// leaves its slowest jobs out of its percentiles (and one with no job has none).
fn fixed_phases(system: &Value) -> Vec<(u64, Result<f64, String>)> {
    system["fixed"]
        .as_array()
        .map(|phases| {
            phases
                .iter()
                .filter_map(|p| {
                    let workers = p["workers"].as_u64()?;
                    let lost = p["lost"].as_u64().unwrap_or(0);
                    let p99 = if p["crashed"].as_bool() == Some(true) {
                        Err("the worker crashed".to_owned())
                    } else if lost > 0 {
                        Err(format!("{lost} not completed"))
                    } else {
                        p["pickupMs"]["p99"].as_f64().ok_or_else(|| "no job completed".to_owned())
                    };
                    Some((workers, p99))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Ahead on pickup p99 at each worker count both ran at the fixed rate: a lower p99 (whole
/// milliseconds; a tie is not ahead). Judged only where both phases completed every job.
fn pickup(ours: &Value, peer: &Value, rate: f64) -> Vec<Target> {
    let theirs = fixed_phases(peer);
    fixed_phases(ours)
        .into_iter()
        .map(|(workers, a)| {
            let text = format!("pickup p99 ahead of {} ({workers} workers, {rate:.0} jobs/s)", label(peer));
            match (a, theirs.iter().find(|(w, _)| *w == workers).map(|(_, b)| b)) {
                (Ok(a), Some(Ok(b))) => Target::new(text, Some(format!("{a:.0} vs {b:.0} ms")), Some(a < *b)),
                (Err(why), Some(_)) => Target::new(text, Some(format!("ours: {why}")), None),
                (Ok(_), Some(Err(why))) => Target::new(text, Some(format!("theirs: {why}")), None),
                (_, None) => Target::new(text, None, None),
            }
        })
        .collect()
}

/// Each chaos cell of this system: passed (every job once), and its recovery time.
fn chaos(ours: &Value) -> Vec<Target> {
    let cells = ours["chaos"].as_array().cloned().unwrap_or_default();
    if cells.is_empty() {
        return vec![Target::new("chaos cells: nothing lost, nothing settled twice", None, None)];
    }
    cells
        .iter()
        .map(|cell| {
            let phase = &cell["phase"];
            let figure = if phase["crashed"].as_bool() == Some(true) {
                "the worker crashed".to_owned()
            } else {
                let (lost, twice) =
                    (phase["lost"].as_u64().unwrap_or(0), phase["twice"].as_u64().unwrap_or(0));
                // Not completed by the drain's end, but completed in the catch-up after it.
                let late = match phase["lateCompleted"].as_u64().unwrap_or(0) {
                    0 => String::new(),
                    n => format!(" ({n} later)"),
                };
                let recovery = match phase["recoverySeconds"].as_f64() {
                    Some(s) => format!("at rate again in {s:.0} s"),
                    // The method's "ok, slow": every job once, the rate not back before the end.
                    None => "rate not back by the end".to_owned(),
                };
                format!("{lost} lost{late}, {twice} twice; {recovery}")
            };
            Target::new(
                format!(
                    "chaos, {}: nothing lost, nothing settled twice",
                    cell["cell"].as_str().unwrap_or("?")
                ),
                Some(figure),
                cell["pass"].as_bool(),
            )
        })
        .collect()
}

pub(crate) fn targets(report: &Value) -> Vec<Target> {
    let systems = installed(report);
    let Some(ours) = systems.iter().find(|s| s["system"].as_str() == Some(OURS)) else {
        return vec![Target::new("peers: this system measured beside them", None, None)];
    };
    let rate = report["peers"]["fixedRate"].as_f64().unwrap_or(0.0);
    let mut out = Vec::new();
    for peer in systems.iter().filter(|s| s["system"].as_str() != Some(OURS)) {
        out.push(throughput(ours, peer));
        out.extend(pickup(ours, peer, rate));
    }
    out.extend(chaos(ours));
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn step(rate: f64, throughput: f64, sustained: bool) -> Value {
        json!({"rate": rate, "throughput": throughput, "sustained": sustained})
    }

    fn system(name: &str, kept: Option<f64>, ladder: Vec<Value>, p99: [f64; 2]) -> Value {
        json!({"system": name, "version": "1.0", "notInstalled": null, "sustainedRate": kept, "ladder": ladder,
               "fixed": [{"workers": 4, "pickupMs": {"p99": p99[0]}}, {"workers": 16, "pickupMs": {"p99": p99[1]}}]})
    }

    fn find<'a>(targets: &'a [Target], text: &str) -> &'a Target {
        targets.iter().find(|t| t.text.contains(text)).expect(text)
    }

    #[test]
    fn throughput_and_pickup_are_judged_per_peer_and_a_tie_at_a_step_by_the_next_step() {
        let ladder = |ours: bool| {
            vec![
                step(1000.0, 1000.0, true),
                step(2000.0, 1990.0, true),
                step(4000.0, if ours { 2466.0 } else { 1548.0 }, false),
            ]
        };
        let mut ours = system("aitasks", Some(2000.0), ladder(true), [9.0, 60.0]);
        ours["chaos"] = json!([
            {"cell": "workers killed", "pass": true, "phase": {"crashed": false, "lost": 0, "twice": 0, "recoverySeconds": 0.0}},
            {"cell": "Postgres restarted", "pass": false, "phase": {"crashed": false, "lost": 3, "twice": 0, "recoverySeconds": null}},
        ]);
        let report = json!({"peers": {"fixedRate": 100.0, "systems": [
            ours,
            system("graphile-worker", Some(2000.0), ladder(false), [6.0, 7.0]),
            system("procrastinate", Some(250.0), vec![step(250.0, 250.0, true), step(500.0, 284.0, false)], [10.0, 21.0]),
            {"system": "absurd", "notInstalled": "why", "ladder": [], "fixed": []},
        ]}});
        let rows = targets(&report);
        let graphile = find(&rows, "throughput ahead of graphile-worker 1.0");
        assert_eq!(graphile.figure.as_deref(), Some("both kept 2000; at 4000: 2466 vs 1548/s"));
        assert_eq!(graphile.met, Some(true));
        let procrastinate = find(&rows, "throughput ahead of procrastinate");
        assert_eq!(
            (procrastinate.figure.as_deref(), procrastinate.met),
            (Some("kept 2000 vs 250 jobs/s"), Some(true))
        );
        let p99 = find(&rows, "p99 ahead of graphile-worker 1.0 (16 workers");
        assert_eq!((p99.figure.as_deref(), p99.met), (Some("60 vs 7 ms"), Some(false)));
        assert_eq!(find(&rows, "p99 ahead of procrastinate 1.0 (4 workers").met, Some(true));
        assert!(!rows.iter().any(|t| t.text.contains("absurd")), "a peer not installed is not judged");
        let killed = find(&rows, "chaos, workers killed");
        assert_eq!(
            (killed.figure.as_deref(), killed.met),
            (Some("0 lost, 0 twice; at rate again in 0 s"), Some(true))
        );
        let restarted = find(&rows, "chaos, Postgres restarted");
        assert_eq!(restarted.met, Some(false));
        assert_eq!(restarted.figure.as_deref(), Some("3 lost, 0 twice; rate not back by the end"));
    }

    #[test]
    fn a_pickup_is_not_compared_where_a_phase_lost_jobs_or_completed_none() {
        let mut ours = system("aitasks", None, vec![], [9.0, 60.0]);
        ours["fixed"][1]["lost"] = json!(4);
        let mut peer = system("absurd", None, vec![], [50.0, 70.0]);
        peer["fixed"][0]["pickupMs"] = Value::Null;
        let rows = targets(&json!({"peers": {"fixedRate": 100.0, "systems": [ours, peer]}}));
        let four = find(&rows, "(4 workers");
        assert_eq!((four.figure.as_deref(), four.met), (Some("theirs: no job completed"), None));
        let sixteen = find(&rows, "(16 workers");
        assert_eq!((sixteen.figure.as_deref(), sixteen.met), (Some("ours: 4 not completed"), None));
    }

    #[test]
    fn a_run_without_this_system_or_its_ladder_judges_nothing() {
        let missing = targets(&json!({"peers": {"systems": []}}));
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0].met, None);
        let report = json!({"peers": {"fixedRate": 100.0, "systems": [
            system("aitasks", None, vec![], [9.0, 60.0]),
            system("pg-boss", None, vec![], [400.0, 450.0]),
        ]}});
        let rows = targets(&report);
        assert_eq!(find(&rows, "throughput ahead of pg-boss").met, None);
        assert_eq!(find(&rows, "chaos cells").met, None);
    }
}
