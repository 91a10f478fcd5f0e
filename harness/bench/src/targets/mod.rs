//! The targets of issues 37 and 51, each row with its figure from this run and whether it was
//! met. A group is judged only when its section ran; within it, a figure this run did not
//! measure (a client count or a peer left out) is said so, never guessed.

mod footprint;
mod peers;
mod per_task;
mod verdict;

use serde_json::{json, Value};

use verdict::Target;

fn targets(report: &Value) -> Vec<Target> {
    let mut out = Vec::new();
    if report.get("lifecycle").is_some() || report.get("batches").is_some() {
        out.extend(per_task::targets(report));
    }
    if report.get("peers").is_some() {
        out.extend(peers::targets(report));
    }
    if report.get("footprint").is_some() {
        out.extend(footprint::targets(report));
    }
    out
}

/// Print the targets' rows; their JSON.
pub(crate) fn section(report: &Value) -> Value {
    let targets = targets(report);
    println!("\ntargets (issues 37 and 51)");
    println!("{:<78} {:>44}  verdict", "target", "figure");
    for target in &targets {
        println!("{:<78} {:>44}  {}", target.text, target.figure.as_deref().unwrap_or("—"), target.verdict());
    }
    Value::Array(
        targets.iter().map(|t| json!({"target": t.text, "figure": t.figure, "met": t.met})).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_sections_that_ran_are_judged() {
        let report =
            json!({"footprint": [{"function": "sweeper", "bytes": 1, "readyMs": 1.0, "peakRssKiB": 1}]});
        let rows = targets(&report);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].text, "sweeper binary < 10 MB");
        assert!(targets(&json!({})).is_empty());
    }
}
