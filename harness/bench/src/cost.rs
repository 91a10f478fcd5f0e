//! What a million tasks cost on AWS, computed from this run's measured figures (the warm
//! invocation times of the footprint section, SQS requests and database statements a task) and
//! the published us-east-1 prices, one task at a time and in batches, beside the same
//! orchestration on Step Functions (standard and express) calling the model through the same
//! Lambda. BENCHMARKS.md ("The cost of a million tasks") has the formula and the inputs.

use serde_json::{json, Map, Value};

use crate::{row, Failure};

/// Published us-east-1 prices (BENCHMARKS.md names the date they were read).
const LAMBDA_ARM_GB_SECOND: f64 = 0.000_013_333_4;
const LAMBDA_REQUEST: f64 = 0.20 / 1e6;
const HTTP_API_REQUEST: f64 = 1.00 / 1e6; // per 512 KB of request
const SQS_REQUEST: f64 = 0.40 / 1e6; // standard queue, per 64 KB
const SFN_STANDARD_TRANSITION: f64 = 25.0 / 1e6;
const SFN_EXPRESS_REQUEST: f64 = 1.00 / 1e6;
const SFN_EXPRESS_GB_SECOND: f64 = 0.000_016_67; // billed in 64 MB and 100 ms steps
/// A 2-vCPU database instance (db.t4g.medium, single-AZ, on demand) and RDS Proxy on its vCPUs.
const DATABASE_HOUR: f64 = 0.065 + 2.0 * 0.015;

/// The provider call a worker waits on (an assumption: our stub answers in milliseconds; a real
/// model takes about a second for a short structured answer). Billed while the worker waits.
const PROVIDER_SECONDS: f64 = 1.0;
const TASKS: f64 = 1e6;

fn memory_gb() -> f64 {
    // The functions' memory, from template.yaml's Globals (MemorySize: 256).
    std::fs::read_to_string("template.yaml")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| l.trim().strip_prefix("MemorySize:").map(|v| v.trim().to_owned()))
        })
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(256.0)
        / 1024.0
}

/// Lambda's billed duration: whole milliseconds, rounded up.
fn billed_seconds(ms: f64) -> f64 {
    ms.ceil() / 1000.0
}

struct Line {
    label: &'static str,
    lambda: f64,
    api: f64,
    sqs: f64,
    orchestration: f64,
    database: f64,
}

impl Line {
    fn total(&self) -> f64 {
        self.lambda + self.api + self.sqs + self.orchestration + self.database
    }
}

pub(crate) fn section(report: &Map<String, Value>) -> Result<Value, Failure> {
    let warm = |function: &str, event: &str| -> Option<f64> {
        report.get("footprint")?.as_array()?.iter().find(|f| f["function"] == function)?["warmMs"][event]
            .as_f64()
    };
    let (Some(one_create), Some(hundred_creates), Some(one_message), Some(ten_messages)) = (
        warm("create-task", "one create"),
        warm("create-task", "a batch of 100 creates"),
        warm("process-task", "a batch of 1 message"),
        warm("process-task", "a batch of 10 messages"),
    ) else {
        return Err("the cost model needs the footprint section's warm invocation times".into());
    };
    let per_task_rate = report.get("lifecycle").and_then(|l| {
        l["points"].as_array()?.iter().find(|p| p["clients"] == 64)?["tasksPerSecond"].as_f64()
    });
    let batched_rate = report.get("batches").and_then(|b| {
        b["lifecycle"]["points"].as_array()?.iter().find(|p| p["clients"] == 64)?["tasksPerSecond"].as_f64()
    });
    let gb = memory_gb();
    let wait = PROVIDER_SECONDS;
    let database = |rate: Option<f64>| rate.map_or(0.0, |r| TASKS / r / 3600.0 * DATABASE_HOUR);

    // One create a call; each message alone in its invocation (a quiet queue).
    // SQS a task: SendMessage, the mapping's ReceiveMessage and DeleteMessageBatch, the event's send.
    let per_task = Line {
        label: "aitasks, one task at a time",
        lambda: TASKS * (2.0 * LAMBDA_REQUEST)
            + TASKS
                * gb
                * LAMBDA_ARM_GB_SECOND
                * (billed_seconds(one_create) + wait + billed_seconds(one_message)),
        api: TASKS * HTTP_API_REQUEST,
        sqs: TASKS * 4.0 * SQS_REQUEST,
        orchestration: 0.0,
        database: database(per_task_rate),
    };
    // Creates 100 a call; messages 10 to an invocation, sharing one wait for the model.
    let batched = Line {
        label: "aitasks, batches (100 a create, 10 a worker)",
        lambda: TASKS / 100.0
            * (LAMBDA_REQUEST + gb * LAMBDA_ARM_GB_SECOND * billed_seconds(hundred_creates))
            + TASKS / 10.0
                * (LAMBDA_REQUEST + gb * LAMBDA_ARM_GB_SECOND * (wait + billed_seconds(ten_messages))),
        api: TASKS / 100.0 * HTTP_API_REQUEST,
        sqs: TASKS * 0.4 * SQS_REQUEST,
        orchestration: 0.0,
        database: database(batched_rate),
    };
    // A state machine a task (start → call the model → store the result → succeed: 3 transitions),
    // its model call in a Lambda like ours, started through the same HTTP API.
    let model_lambda =
        TASKS * (LAMBDA_REQUEST + gb * LAMBDA_ARM_GB_SECOND * (wait + billed_seconds(one_message)));
    let standard = Line {
        label: "Step Functions standard + the model's Lambda",
        lambda: model_lambda,
        api: TASKS * HTTP_API_REQUEST,
        sqs: 0.0,
        orchestration: TASKS * 3.0 * SFN_STANDARD_TRANSITION,
        database: 0.0,
    };
    let express_seconds = ((wait + 0.05) * 10.0).ceil() / 10.0;
    let express = Line {
        label: "Step Functions express + the model's Lambda",
        lambda: model_lambda,
        api: TASKS * HTTP_API_REQUEST,
        sqs: 0.0,
        orchestration: TASKS * (SFN_EXPRESS_REQUEST + 0.0625 * express_seconds * SFN_EXPRESS_GB_SECOND),
        database: 0.0,
    };
    let lines = [per_task, batched, standard, express];
    println!(
        "\nthe cost of a million tasks on AWS (USD, us-east-1, arm64 at {:.0} MB; the model's tokens not included; a {wait:.1} s provider call assumed)",
        gb * 1024.0
    );
    row(
        "",
        &[
            "Lambda".into(),
            "HTTP API".into(),
            "SQS".into(),
            "orchestr.".into(),
            "database".into(),
            "total".into(),
        ],
    );
    for line in &lines {
        row(
            line.label,
            &[line.lambda, line.api, line.sqs, line.orchestration, line.database, line.total()]
                .iter()
                .map(|v| format!("{v:.2}"))
                .collect::<Vec<_>>(),
        );
    }
    Ok(json!({
        "inputs": {"memoryGb": gb, "providerSeconds": wait, "warmMs": {"oneCreate": one_create, "hundredCreates": hundred_creates,
                   "oneMessage": one_message, "tenMessages": ten_messages},
                   "lifecycleTasksPerSecond": {"perTask": per_task_rate, "batched": batched_rate}},
        "lines": lines.iter().map(|l| json!({"label": l.label, "lambda": l.lambda, "httpApi": l.api, "sqs": l.sqs,
                   "orchestration": l.orchestration, "database": l.database, "total": l.total()})).collect::<Vec<_>>(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_shares_the_wait_and_the_requests() {
        let report = json!({
            "footprint": [
                {"function": "create-task", "warmMs": {"one create": 3.2, "a batch of 100 creates": 14.3}},
                {"function": "process-task", "warmMs": {"a batch of 1 message": 3.7, "a batch of 10 messages": 8.0}},
            ],
            "lifecycle": {"points": [{"clients": 64, "tasksPerSecond": 1800.0}]},
            "batches": {"lifecycle": {"batched": 4500.0}},
        });
        let figures = section(report.as_object().unwrap()).unwrap();
        let total = |i: usize| figures["lines"][i]["total"].as_f64().unwrap();
        // One task at a time: 2 invocations ($0.40), the HTTP API ($1), 4 SQS requests ($1.60),
        // and 256 MB for 4 ms + 1 s + 4 ms (about $3.36), plus the database's share.
        assert!((total(0) - 6.37).abs() < 0.05, "{}", total(0));
        assert!(total(1) < total(0) / 5.0, "batches: {} against {}", total(1), total(0));
        assert!(
            (figures["lines"][2]["orchestration"].as_f64().unwrap() - 75.0).abs() < 1e-6,
            "3 transitions a task"
        );
    }
}
