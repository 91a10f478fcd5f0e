//! End-to-end tests live in `e2e/`; event fixtures (API Gateway v2, SQS, EventBridge schedule)
//! in `fixtures/`. Run them with `make test`, or after `make up`:
//! `cargo build -p aitasks-dev-server && cargo test -p aitasks-e2e`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use aitasks_contracts::AiRequest;
use serde_json::{json, Value};

/// The answer a model gave, rebuilt from a stored output, so that the contract checker can
/// judge the output again.
pub fn answer_from_output(request: &AiRequest, output: &Value) -> Value {
    match request {
        AiRequest::GenerateText(_) => json!({"text": output}),
        AiRequest::Classify(_) => json!({"choice": output}),
        AiRequest::ClassifyMany(_) => json!({"choices": output}),
        AiRequest::ExtractData(r) => {
            let mut answer = serde_json::Map::new();
            for field in &r.fields {
                answer.insert(field.name.clone(), output.get(&field.name).cloned().unwrap_or(Value::Null));
            }
            Value::Object(answer)
        }
    }
}
