//! The per-task path's targets (issues 37 and 51), read from the report the lifecycle and
//! batches sections wrote.

use serde_json::Value;

use super::verdict::Target;

/// A drop in tasks a second from one client count to the next larger one within this share is
/// noise (runs of the same point on this machine move by about as much).
pub(crate) const NOISE: f64 = 0.10;

/// The shipped lifecycle's points: none when the run was the what-if without the publish mark
/// (its figures are not the shipped path's, so no target is judged on them).
fn shipped_points(report: &Value) -> Option<&Vec<Value>> {
    if report["lifecycle"]["withoutPublishMark"].as_bool() == Some(true) {
        return None;
    }
    report["lifecycle"]["points"].as_array()
}

fn plural(count: u64) -> &'static str {
    if count == 1 {
        ""
    } else {
        "s"
    }
}

fn point(report: &Value, clients: u64) -> Option<&Value> {
    shipped_points(report)?.iter().find(|p| p["clients"].as_u64() == Some(clients))
}

fn ratio_target(report: &Value, clients: u64, key: &str, at_least: f64, against: &str) -> Target {
    let ratio = point(report, clients).and_then(|p| p[key].as_f64());
    Target {
        text: format!(
            "per-task lifecycle ≥ {at_least}x the {against} at {clients} client{}",
            plural(clients)
        ),
        figure: ratio.map(|r| format!("{r:.2}x")),
        met: ratio.map(|r| r >= at_least),
    }
}

pub(crate) fn targets(report: &Value) -> Vec<Target> {
    let mut out = Vec::new();
    let mut one = ratio_target(report, 1, "ratioToFloor", 0.7, "floor");
    if let (Some(figure), Some(trips)) = (&one.figure, report["lifecycle"]["roundTripsAtOneClient"].as_f64())
    {
        one.figure = Some(format!("{figure} ({trips:.2} round trips; floor 3)"));
    }
    out.push(one);
    for clients in [4, 16, 64] {
        out.push(ratio_target(report, clients, "ratioToFloor", 0.8, "floor"));
    }
    out.push(ratio_target(report, 64, "ratioToReference", 3.0, "reference"));
    // Each client count against the one below it.
    let points: Vec<(u64, f64)> = shipped_points(report)
        .map(|points| {
            points
                .iter()
                .filter_map(|p| Some((p["clients"].as_u64()?, p["tasksPerSecond"].as_f64()?)))
                .collect()
        })
        .unwrap_or_default();
    let worst = points
        .windows(2)
        .map(|pair| (pair[0].0, pair[1].0, pair[1].1 / pair[0].1))
        .min_by(|a, b| a.2.total_cmp(&b.2));
    out.push(Target {
        text: format!("no client count below the one under it by more than noise ({:.0}%)", NOISE * 100.0),
        figure: worst.map(|(from, to, ratio)| format!("worst {from}→{to}: {ratio:.2}x")),
        met: worst.map(|(_, _, ratio)| ratio >= 1.0 - NOISE),
    });
    let batch_points: Vec<&Value> =
        report["batches"]["lifecycle"]["points"].as_array().map(|p| p.iter().collect()).unwrap_or_default();
    // Issue 51: at every client count the batches section measured, not only the largest.
    for point in &batch_points {
        let (Some(clients), ratio) = (point["clients"].as_u64(), point["ratioToFloor"].as_f64()) else {
            continue;
        };
        out.push(Target::new(
            format!("lifecycle in batches of 10 ≥ 2x the floor at {clients} client{}", plural(clients)),
            ratio.map(|r| format!("{r:.2}x")),
            ratio.map(|r| r >= 2.0),
        ));
    }
    if batch_points.is_empty() {
        out.push(Target::new("lifecycle in batches of 10 ≥ 2x the floor", None, None));
    }
    let most = batch_points.iter().filter_map(|p| p["statementsPerTask"].as_f64()).max_by(f64::total_cmp);
    out.push(Target {
        text: "statements a task in batches of 10 ≤ 1.5 (the most at any client count)".into(),
        figure: most.map(|s| format!("{s:.2}")),
        met: most.map(|s| s <= 1.5),
    });
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_target_is_judged_from_its_figure_and_a_missing_one_is_not_measured() {
        let report = json!({
            "lifecycle": {"roundTripsAtOneClient": 5.0, "points": [
                {"clients": 1, "tasksPerSecond": 500.0, "ratioToFloor": 0.75, "ratioToReference": 2.0},
                {"clients": 4, "tasksPerSecond": 1500.0, "ratioToFloor": 0.79, "ratioToReference": 2.5},
                {"clients": 16, "tasksPerSecond": 1300.0, "ratioToFloor": 0.9, "ratioToReference": 2.9},
            ]},
            "batches": {"lifecycle": {"points": [
                {"clients": 1, "ratioToFloor": 1.2, "statementsPerTask": 0.5},
                {"clients": 64, "ratioToFloor": 2.1, "statementsPerTask": 1.6},
            ]}},
        });
        let targets = targets(&report);
        let verdict = |text: &str| {
            let target = targets.iter().find(|t| t.text.contains(text)).expect(text);
            (target.figure.clone(), target.met)
        };
        assert_eq!(
            verdict("0.7x the floor at 1 client"),
            (Some("0.75x (5.00 round trips; floor 3)".into()), Some(true))
        );
        assert_eq!(verdict("0.8x the floor at 4 clients"), (Some("0.79x".into()), Some(false)));
        assert_eq!(verdict("0.8x the floor at 16 clients"), (Some("0.90x".into()), Some(true)));
        assert_eq!(verdict("0.8x the floor at 64 clients"), (None, None));
        assert_eq!(verdict("3x the reference at 64"), (None, None));
        // 4 → 16 fell 13%: more than noise.
        assert_eq!(verdict("noise"), (Some("worst 4→16: 0.87x".into()), Some(false)));
        assert_eq!(verdict("2x the floor at 64 clients"), (Some("2.10x".into()), Some(true)));
        assert_eq!(verdict("2x the floor at 1 client"), (Some("1.20x".into()), Some(false)));
        assert_eq!(verdict("≤ 1.5"), (Some("1.60".into()), Some(false)));
    }

    #[test]
    fn a_what_if_run_judges_no_per_task_target() {
        let report = json!({
            "lifecycle": {"withoutPublishMark": true, "roundTripsAtOneClient": 3.0, "points": [
                {"clients": 1, "tasksPerSecond": 700.0, "ratioToFloor": 0.9, "ratioToReference": 2.0},
                {"clients": 4, "tasksPerSecond": 1500.0, "ratioToFloor": 0.9, "ratioToReference": 2.5},
            ]},
        });
        let targets = targets(&report);
        let per_task: Vec<_> =
            targets.iter().filter(|t| t.text.contains("per-task") || t.text.contains("noise")).collect();
        assert!(!per_task.is_empty());
        assert!(
            per_task.iter().all(|t| t.figure.is_none() && t.met.is_none()),
            "a what-if is not the shipped path"
        );
    }
}
