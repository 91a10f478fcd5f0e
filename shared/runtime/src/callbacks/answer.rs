//! What a callback says when its task ends (docs/events.md, "Callbacks"), a pure function of the
//! task's end: a success's answer `{taskId, status, output, usage}` (Step Functions' task output,
//! a durable callback's `Result`), or a failure's error and cause. An answer over 256 KiB, the
//! most either takes, is replaced by a small one that says so and how to read the task.

use aitasks_contracts::{ErrorCode, TaskStatus, CALLBACK_RESULT_MAX_BYTES};
use aitasks_store::TaskEnd;
use serde_json::{json, Value};
use uuid::Uuid;

/// The error a canceled task's callback fails with.
pub(crate) const CANCELED_ERROR: &str = "CANCELED";

/// How a task's end answers its callers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// The task succeeded: this JSON text.
    Success(String),
    /// It failed or was canceled: the error (our code, or `CANCELED`), its cause (the stored
    /// message) and a JSON text with the task's id, status and code.
    Failure { error: String, cause: String, data: String },
}

pub(crate) fn answer(task_id: Uuid, end: &TaskEnd) -> Answer {
    match end.status {
        TaskStatus::Succeeded => Answer::Success(success(task_id, end)),
        status => {
            let error = match status {
                TaskStatus::Canceled => CANCELED_ERROR.to_owned(),
                _ => end.error_code.clone().unwrap_or_else(|| ErrorCode::RuntimeError.as_str().to_owned()),
            };
            let data = json!({"taskId": task_id, "status": status.as_str(), "errorCode": end.error_code});
            Answer::Failure {
                error,
                cause: end
                    .error_message
                    .clone()
                    .unwrap_or_else(|| format!("The task ended {}.", status.as_str())),
                data: data.to_string(),
            }
        }
    }
}

fn success(task_id: Uuid, end: &TaskEnd) -> String {
    let usage = end.usage.clone().unwrap_or(Value::Null);
    let status = TaskStatus::Succeeded.as_str();
    let whole =
        json!({"taskId": task_id, "status": status, "output": end.output, "usage": usage}).to_string();
    if whole.len() <= CALLBACK_RESULT_MAX_BYTES {
        return whole;
    }
    json!({
        "taskId": task_id,
        "status": status,
        "output": null,
        "usage": usage,
        "outputTooLarge": {
            "bytes": whole.len(),
            "limit": CALLBACK_RESULT_MAX_BYTES,
            "read": format!("GET /v1/tasks/{task_id}"),
        },
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(status: TaskStatus, output: Option<Value>, code: Option<&str>) -> TaskEnd {
        TaskEnd {
            status,
            output,
            usage: Some(json!({"inputTokens": 12, "outputTokens": 3})),
            error_code: code.map(str::to_owned),
            error_message: code.map(|_| "The model refused.".to_owned()),
        }
    }

    #[test]
    fn a_success_answers_the_output_and_a_failure_its_code() {
        let id = Uuid::nil();
        let Answer::Success(text) = answer(id, &end(TaskStatus::Succeeded, Some(json!("pos")), None)) else {
            panic!("a success")
        };
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            parsed,
            json!({"taskId": id, "status": "succeeded", "output": "pos",
                                  "usage": {"inputTokens": 12, "outputTokens": 3}})
        );
        let failed = answer(id, &end(TaskStatus::Failed, None, Some("AI_MODEL_REFUSED")));
        let Answer::Failure { error, cause, data } = failed else { panic!("a failure") };
        assert_eq!((error.as_str(), cause.as_str()), ("AI_MODEL_REFUSED", "The model refused."));
        assert_eq!(serde_json::from_str::<Value>(&data).unwrap()["status"], "failed");
        let canceled = answer(id, &end(TaskStatus::Canceled, None, Some("WORKFLOW_AI_CANCELED")));
        assert!(matches!(canceled, Answer::Failure { error, .. } if error == CANCELED_ERROR));
    }

    #[test]
    fn an_answer_over_256_kib_says_how_to_read_the_task() {
        let id = Uuid::nil();
        let big = json!({"text": "x".repeat(CALLBACK_RESULT_MAX_BYTES)});
        let Answer::Success(text) = answer(id, &end(TaskStatus::Succeeded, Some(big), None)) else {
            panic!("a success")
        };
        assert!(text.len() < 1_000, "{} bytes", text.len());
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["output"], Value::Null);
        assert_eq!(parsed["outputTooLarge"]["read"], format!("GET /v1/tasks/{id}"));
        assert!(parsed["outputTooLarge"]["bytes"].as_u64().unwrap() > CALLBACK_RESULT_MAX_BYTES as u64);
        // Just under the limit goes whole.
        let fits = "x".repeat(CALLBACK_RESULT_MAX_BYTES - 200);
        let Answer::Success(text) = answer(id, &end(TaskStatus::Succeeded, Some(json!(fits)), None)) else {
            panic!("a success")
        };
        assert!(text.len() <= CALLBACK_RESULT_MAX_BYTES && text.contains(&fits));
    }
}
