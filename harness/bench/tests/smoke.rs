//! The benchmark that cannot rot (issue 37): `make test` runs `aitasks-bench` with
//! `BENCH_SMOKE=1` on the debug build, against the test stack `make up` started: every section
//! of `make bench` (its fresh databases, its resets, pgbench's floor and reference, the dev
//! server, the function binaries, graphile-worker) at its smallest size. A schema or statement
//! change that breaks any of them fails here. The figures of a smoke run mean nothing; what is
//! checked is that each section ran and reported what it must, and that this system's statements
//! are each named by their file in the store.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where this test's build put its binaries (`target/debug`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).expect("target/<profile>/deps").to_path_buf()
}

/// The dev server and the function binaries the benchmark starts, built as `make build` builds
/// them (cargo answers at once when they are up to date, as under `make unit`).
fn build_binaries(profile_dir: &Path) {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    // What cargo set for this test binary is not the build's (it would rebuild crates whose build
    // scripts read it).
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy().into_owned();
        if name == "CARGO_MANIFEST_DIR"
            || name == "CARGO_MANIFEST_PATH"
            || name.starts_with("CARGO_PKG_")
            || [
                "CARGO_CRATE_NAME",
                "CARGO_BIN_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "OUT_DIR",
            ]
            .contains(&name.as_str())
        {
            command.env_remove(name);
        }
    }
    let target_dir = profile_dir.parent().expect("the target folder");
    command.args(["build", "--quiet", "--workspace", "--all-targets"]);
    if profile_dir.file_name().is_some_and(|name| name == "release") {
        command.arg("--release");
    }
    let status = command.arg("--target-dir").arg(target_dir).current_dir(workspace_root()).status().unwrap();
    assert!(status.success(), "building the binaries the benchmark starts failed");
}

fn number(value: &Value, what: &str) -> f64 {
    value.as_f64().unwrap_or_else(|| panic!("{what} is not a number: {value}"))
}

#[test]
fn every_section_of_the_benchmark_runs_at_its_smallest() {
    let profile_dir = profile_dir();
    build_binaries(&profile_dir);
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-smoke");
    let _ = std::fs::remove_file(out.join("latest.json"));
    // The owner's URL: the benchmark creates and drops databases of its own.
    let url = aitasks_testkit::local_env("AITASK_MIGRATE_DATABASE_URL");
    let output = Command::new(env!("CARGO_BIN_EXE_aitasks-bench"))
        .env("BENCH_SMOKE", "1")
        .env_remove("BENCH_QUICK")
        .env_remove("BENCH_ONLY")
        .env_remove("BENCH_CLIENTS")
        .env_remove("BENCH_TRIALS")
        .env_remove("BENCH_HEARTBEAT")
        .env("DATABASE_URL", &url)
        .env("BENCH_OUT", &out)
        .env("BENCH_BIN_DIR", &profile_dir)
        .env("AITASK_DEV_SERVER_BIN", profile_dir.join("aitasks-dev-server"))
        .current_dir(workspace_root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "the benchmark failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("latest.json")).unwrap()).unwrap();
    assert_eq!(report["machine"]["smoke"], true);

    // The per-task lifecycle: each point beside its floor and reference, and its cost found.
    let points = report["lifecycle"]["points"].as_array().expect("lifecycle points");
    assert_eq!(points.iter().map(|p| p["clients"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 4]);
    for point in points {
        for key in ["tasksPerSecond", "floor", "reference"] {
            assert!(number(&point[key], key) > 0.0, "{key}: {point}");
        }
    }
    let costs = report["lifecycle"]["cost"].as_array().expect("lifecycle costs");
    assert_eq!(costs.len(), 2, "a cost at 1 client and at the smoke run's largest count");
    for cost in costs {
        let ours = &cost["ours"];
        let names: Vec<&str> =
            ours["statements"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
        // Every statement the lifecycle sends is the store's, named by its file.
        assert!(names.iter().all(|name| name.contains('/') && !name.contains(' ')), "{names:?}");
        // A group of one settles through the single statement (store::complete_many), ten through the group's.
        let settled = names.contains(&"settle/complete_many") || names.contains(&"settle/complete_attempt");
        assert!(names.contains(&"lease/claim_by") && settled, "{names:?}");
        assert!(number(&ours["statementsPerTask"], "statements a task") >= 1.0);
        assert!(number(&ours["walPerTask"]["records"], "WAL records a task") > 0.0);
        assert!(number(&ours["clientCpuMsPerTask"], "client CPU a task") >= 0.0);
        assert!(ours["waits"].is_array());
        assert!(number(&cost["floor"]["statementsPerTask"], "the floor's statements") >= 3.0);
        assert!(cost["floor"]["clientCpuMsPerTask"].is_null(), "pgbench's CPU is not this process's");
    }
    assert!(number(&report["lifecycle"]["roundTripsAtOneClient"], "round trips") >= 1.0);

    // Batches: creates, and the batched lifecycle with its cost at each point.
    assert!(number(&report["batches"]["create"]["batched"], "batched creates") > 0.0);
    let batched = report["batches"]["lifecycle"]["points"].as_array().expect("batched points");
    assert_eq!(batched.len(), 2);
    for point in batched {
        assert!(number(&point["tasksPerSecond"], "batched lifecycle") > 0.0);
        let per_task = number(&point["statementsPerTask"], "statements a task in batches");
        assert!(per_task > 0.0 && per_task < 5.0, "{per_task}");
    }

    assert!(number(&report["roundTrips"]["ours"], "round trips") >= 1.0);
    assert_eq!(report["admission"]["perScope"]["limitsExact"], true);
    assert_eq!(report["admission"]["globalLock"]["limitsExact"], true);

    // End to end: both loads, and the worker's parts as its metrics report them.
    let e2e = &report["endToEnd"];
    assert!(number(&e2e["tasksPerSecond"], "end to end") > 0.0);
    let light = &e2e["lightLoad"];
    assert_eq!(light["tasks"], 5.0);
    for key in
        ["p50Ms", "p99Ms", "claimMs", "gateMs", "settleMs", "eventMs", "callbacksMs", "workerOverheadMs"]
    {
        assert!(number(&light[key], key) >= 0.0, "{key}");
    }
    assert_eq!(light["settlementsReported"], 5.0, "each settlement reports its parts");
    assert!(number(&e2e["claimMs"], "claim under saturation") >= 0.0);

    assert!(number(&report["graphileWorker"]["graphileJobsPerSecond"], "graphile-worker") > 0.0);
    // The peers section at its smallest: this system alone (no peer, no Postgres restart of the
    // shared test cluster), every produced job completed exactly once, also with its workers
    // killed and with a long transaction open.
    let ours = &report["peers"]["systems"][0];
    assert_eq!(ours["system"], "aitasks", "{ours}");
    let cells = ours["chaos"].as_array().expect("chaos cells");
    assert_eq!(
        cells.iter().map(|c| c["cell"].as_str().unwrap()).collect::<Vec<_>>(),
        ["workers killed", "long transaction"]
    );
    let phases =
        ours["fixed"].as_array().expect("fixed-rate phases").iter().chain(cells.iter().map(|c| &c["phase"]));
    for phase in phases {
        assert!(number(&phase["produced"], "produced") > 0.0, "{phase}");
        assert_eq!((&phase["lost"], &phase["twice"]), (&Value::from(0), &Value::from(0)), "{phase}");
    }
    assert!(number(&report["peers"]["sqsHop"]["fixed"][0]["completed"], "SQS hop") > 0.0);
    for run in ["realTime", "heldByBatches", "pastTheQuota"] {
        let heartbeats = &report["heartbeats"][run];
        assert!(number(&heartbeats["sweeps"], run) >= 1.0, "{run}: {heartbeats}");
        assert!(number(&heartbeats["longestGapSeconds"]["max"], run) > 0.0, "{run}: {heartbeats}");
    }
    let reads = &report["reads"];
    for run in ["alone", "rateOff", "rateOn"] {
        assert!(number(&reads[run]["tasksPerSecond"], run) > 0.0, "{run}: {reads}");
    }
    assert!(number(&reads["rateOn"]["summariesPerSecond"], "summaries") > 0.0, "{reads}");
    // Operations: each run's operation ended done with every task it matched acted on.
    for action in ["replay", "cancel"] {
        for run in ["quiet", "besideWork"] {
            let operation = &report["operations"]["runs"][action][run]["operation"];
            assert_eq!(operation["state"], "done", "{action} {run}: {operation}");
            assert_eq!(operation["done"], operation["matched"], "{action} {run}: {operation}");
        }
    }
    // The outage: no task failed, every one succeeded once the provider answered again.
    let outage = &report["outage"];
    assert_eq!(outage["failed"], 0, "{outage}");
    assert_eq!(outage["succeeded"], outage["tasks"], "{outage}");
    // Live output: every piece streamed reached its reader at each point, a streamed task wrote
    // its text in chunks and a whole answer wrote none, and both sides' costs were measured.
    let streams = &report["streams"];
    let pieces = number(&streams["pieces"], "pieces");
    let points = streams["points"].as_array().expect("streams points");
    assert_eq!(points.iter().map(|p| p["streams"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 4]);
    for point in points {
        let latency = &point["latency"];
        assert_eq!(number(&latency["pieces"], "pieces read"), pieces * number(&point["streams"], "streams"));
        assert!(number(&latency["p95Ms"], "p95") >= number(&latency["p50Ms"], "p50"), "{point}");
        assert!(number(&point["streamed"]["chunkRowsPerTask"], "chunks") >= 1.0, "{point}");
        assert_eq!(number(&point["streamed"]["streamRowsPerTask"], "streams"), 1.0, "{point}");
        assert_eq!(number(&point["whole"]["chunkRowsPerTask"], "a whole answer's chunks"), 0.0, "{point}");
        for side in ["streamed", "whole"] {
            assert!(number(&point[side]["walBytesPerTask"], side) > 0.0, "{point}");
            assert!(number(&point[side]["cpuMsPerTask"], side) > 0.0, "{point}");
        }
        assert!(number(&point["cpuRatio"], "CPU ratio") > 0.0, "{point}");
    }
    assert!(stdout.contains("provider chunk to reader") && stdout.contains("CPU streamed / whole"));
    let footprint = report["footprint"].as_array().expect("footprint");
    assert_eq!(footprint.len(), 7, "every Lambda binary the stack deploys");
    assert!(footprint.iter().all(|f| f["handled"] == true), "{footprint:?}");
    assert_eq!(report["batchResults"]["succeeded"], report["batchResults"]["tasks"]);
    assert!(report["costOfAMillionTasks"].is_object() || report["costOfAMillionTasks"].is_array());

    // `make simulate`'s sections: the limits held, and each delivery order served the quiet
    // applications.
    assert!(report["simulate"].as_array().is_some_and(|points| points.len() == 2), "{}", report["simulate"]);
    let deliveries = report["fairness"]["runs"].as_array().expect("fairness runs");
    assert_eq!(deliveries.len(), 2);
    assert!(deliveries.iter().all(|run| number(&run["quietTasks"], "quiet tasks") > 0.0), "{deliveries:?}");

    // Every target row is printed and judged, or said not measured (no 16 or 64 clients here):
    // the per-task path's, a binary's size per function, and this system's chaos cells (no peer
    // runs in a smoke run, so none is compared).
    let targets = report["targets"].as_array().expect("targets");
    let rows = |text: &str| {
        targets.iter().filter(|t| t["target"].as_str().unwrap().contains(text)).collect::<Vec<_>>()
    };
    assert_eq!(rows("per-task lifecycle").len(), 5, "{targets:?}");
    assert_eq!(rows("in batches of 10 ≥ 2x").len(), 2, "one a batch client count: {targets:?}");
    assert!(targets.iter().any(|t| t["met"].is_null()), "64 clients are not measured in a smoke run");
    let binaries = rows("binary < 10 MB");
    assert_eq!(binaries.len(), 7, "every Lambda binary the stack deploys: {targets:?}");
    assert!(binaries.iter().all(|t| t["met"].is_boolean() && t["figure"].as_str().unwrap().contains("peak")));
    let chaos = rows("chaos, ");
    assert_eq!(chaos.len(), 2, "{targets:?}");
    assert!(chaos.iter().all(|t| t["met"] == true), "every job once in each cell: {chaos:?}");
    assert!(rows("ahead of").is_empty(), "no peer in a smoke run: {targets:?}");
    assert!(stdout.contains("targets (issues 37 and 51)"));
}
