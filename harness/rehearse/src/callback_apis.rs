//! The AWS APIs the rehearsal answers itself, once its AWS proxy has judged the call:
//! Step Functions' task-token calls (`SendTaskSuccess`, `SendTaskFailure`, `SendTaskHeartbeat`),
//! EventBridge's `PutEvents`, and Lambda's durable-execution callbacks (`POST
//! /2025-12-01/durable-execution-callbacks/{CallbackId}/succeed|fail|heartbeat`). No emulator is
//! needed for what the rehearsal checks: which function calls what, on which resource, and
//! whether its role allows it.
//!
//! IAM authorizes a task-token call on the state machine whose execution minted the token, and a
//! durable callback on the durable function whose execution opened it: the scenario mints the
//! tokens and ids, and says whose they are ([`Owners`]).

use std::collections::HashMap;

use axum::http::StatusCode;
use serde_json::{json, Value};

/// Who minted each token and callback id the scenario hands out.
#[derive(Debug, Default, Clone)]
pub struct Owners {
    /// Step Functions task token → the state machine's ARN.
    pub task_tokens: HashMap<String, String>,
    /// Durable callback id → the durable function's ARN.
    pub callback_ids: HashMap<String, String>,
}

/// A call to one of these APIs: what IAM judges, and the answer when it is allowed.
#[derive(Debug, Clone)]
pub struct LocalCall {
    pub service: &'static str,
    pub operation: String,
    pub resource: String,
    /// The task token or callback id named.
    pub subject: Option<String>,
    pub status: StatusCode,
    pub content_type: &'static str,
    pub answer: String,
}

/// The durable-callback path's operation (`succeed` → `SendDurableExecutionCallbackSuccess`)
/// and its (percent-decoded) callback id.
fn durable_operation(path: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let ["2025-12-01", "durable-execution-callbacks", id, action] = parts.as_slice() else { return None };
    let operation = match *action {
        "succeed" => "SendDurableExecutionCallbackSuccess",
        "fail" => "SendDurableExecutionCallbackFailure",
        "heartbeat" => "SendDurableExecutionCallbackHeartbeat",
        _ => return None,
    };
    Some((operation.to_owned(), percent_decode(id)))
}

pub(crate) fn percent_decode(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let hex = text.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The call, when `target` (`X-Amz-Target`) or `path` is one of these APIs.
pub fn recognize(
    target: &str,
    path: &str,
    body: &[u8],
    owners: &Owners,
    region: &str,
    account: &str,
) -> Option<LocalCall> {
    let parsed: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    if let Some(operation) = target.strip_prefix("AWSStepFunctions.") {
        let token = parsed["taskToken"].as_str().unwrap_or_default();
        let resource = owners.task_tokens.get(token).cloned().unwrap_or_else(|| {
            format!("arn:aws:states:{region}:{account}:stateMachine:not-minted-by-the-rehearsal")
        });
        return Some(LocalCall {
            service: "states",
            operation: operation.to_owned(),
            resource,
            subject: Some(token.to_owned()),
            status: StatusCode::OK,
            content_type: "application/x-amz-json-1.0",
            answer: "{}".to_owned(),
        });
    }
    if target == "AWSEvents.PutEvents" {
        let entries = parsed["Entries"].as_array().cloned().unwrap_or_default();
        let bus = entries.first().and_then(|e| e["EventBusName"].as_str()).unwrap_or("default");
        let resource = if bus.starts_with("arn:") {
            bus.to_owned()
        } else {
            format!("arn:aws:events:{region}:{account}:event-bus/{bus}")
        };
        let ids: Vec<Value> =
            entries.iter().map(|_| json!({"EventId": uuid::Uuid::new_v4().to_string()})).collect();
        return Some(LocalCall {
            service: "events",
            operation: "PutEvents".to_owned(),
            resource,
            subject: None,
            status: StatusCode::OK,
            content_type: "application/x-amz-json-1.1",
            answer: json!({"FailedEntryCount": 0, "Entries": ids}).to_string(),
        });
    }
    let (operation, id) = durable_operation(path)?;
    let resource =
        owners.callback_ids.get(&id).cloned().unwrap_or_else(|| {
            format!("arn:aws:lambda:{region}:{account}:function:not-minted-by-the-rehearsal")
        });
    Some(LocalCall {
        service: "lambda",
        operation,
        resource,
        subject: Some(id),
        status: StatusCode::OK,
        content_type: "application/json",
        answer: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_api_is_judged_on_its_owner() {
        let mut owners = Owners::default();
        owners.task_tokens.insert("tok".into(), "arn:aws:states:r:1:stateMachine:m".into());
        owners.callback_ids.insert("cb/+=".into(), "arn:aws:lambda:r:1:function:f:1".into());
        let sfn =
            recognize("AWSStepFunctions.SendTaskSuccess", "/", br#"{"taskToken":"tok"}"#, &owners, "r", "1")
                .unwrap();
        assert_eq!((sfn.service, sfn.resource.as_str()), ("states", "arn:aws:states:r:1:stateMachine:m"));
        let put = recognize(
            "AWSEvents.PutEvents",
            "/",
            br#"{"Entries":[{"EventBusName":"b"}]}"#,
            &owners,
            "r",
            "1",
        )
        .unwrap();
        assert_eq!(put.resource, "arn:aws:events:r:1:event-bus/b");
        assert!(put.answer.contains("\"FailedEntryCount\":0"));
        let durable = recognize(
            "",
            "/2025-12-01/durable-execution-callbacks/cb%2F%2B%3D/fail",
            b"{}",
            &owners,
            "r",
            "1",
        )
        .unwrap();
        assert_eq!(durable.operation, "SendDurableExecutionCallbackFailure");
        assert_eq!(durable.resource, "arn:aws:lambda:r:1:function:f:1");
        assert!(recognize("AmazonSQS.SendMessage", "/", b"{}", &owners, "r", "1").is_none());
    }
}
