//! All four kinds against the real local model (llama-server with SmolLM2, started by
//! `make up`), through the dev server. A small model may fail a kind; then the task must end
//! `failed` with `WORKFLOW_AI_LOOP_FAILED`, never with a wrong output stored. Every success is
//! checked again against the request's contract.

use aitasks_contracts::{check_answer, AiRequest, Path};
use aitasks_e2e::answer_from_output;
use aitasks_testkit::*;
use serde_json::{json, Value};

#[tokio::test]
async fn every_kind_against_the_local_model_is_valid_or_fails_cleanly() {
    let model_url = try_local_env("OPENAI_BASE_URL").expect("the local model is not running: run `make up`");
    let model = try_local_env("AITASK_DEFAULT_MODEL").unwrap_or_else(|| "SmolLM2-135M-Instruct".into());
    let stack = Stack::start_with(&[
        ("OPENAI_BASE_URL", &model_url),
        ("AITASK_DEFAULT_MODEL", &model),
        ("AITASK_SCHEMA_DIALECT", "full"),
        ("AITASK_PROVIDER_TIMEOUT_MS", "120000"),
        ("AITASK_HEARTBEAT_MS", "2000"),
        ("AITASK_STALE_RUNNING_MS", "60000"),
    ])
    .await;
    let api = stack.api("model-app");
    let requests = [
        json!({"kind": "generate_text", "prompt": "Write a short friendly greeting.", "maxOutputChars": 200}),
        json!({"kind": "classify", "prompt": "Is the review positive or negative?", "input": {"review": "I love it, it works great."}, "choices": ["positive", "negative"]}),
        json!({"kind": "classify_many", "prompt": "Which topics are mentioned?", "input": {"text": "The invoice was wrong and the parcel arrived late."}, "choices": ["billing", "delivery", "weather"], "minChoices": 1}),
        json!({"kind": "extract_data", "prompt": "Extract the order.", "input": {"email": "Send 3 boxes to Lyon."}, "fields": [
            {"name": "quantity", "type": "number", "description": "number of boxes", "required": true},
            {"name": "city", "type": "text", "description": "destination city", "required": true, "maxLength": 50},
            {"name": "urgent", "type": "boolean", "description": "is it urgent", "required": false}]}),
    ];
    let mut ids = Vec::new();
    for (i, request) in requests.iter().enumerate() {
        let body = json!({"owner": {"scopeId": "s"}, "stepKey": "model", "effectKey": format!("model-{i}"), "modelId": "default", "request": request});
        let (status, task) = api.post("/v1/tasks", &body).await;
        assert_eq!(status, 201, "{task}");
        ids.push(task["id"].as_str().expect("id").to_owned());
    }
    let mut succeeded = 0;
    for (id, request) in ids.iter().zip(&requests) {
        let task = api
            .wait_within(id, std::time::Duration::from_secs(240), |t| {
                matches!(t["status"].as_str(), Some("succeeded" | "failed" | "canceled"))
            })
            .await;
        let kind = request["kind"].as_str().unwrap_or_default();
        match task["status"].as_str() {
            Some("succeeded") => {
                succeeded += 1;
                let parsed = AiRequest::parse(request, &Path::root()).expect("valid request");
                let answer = answer_from_output(&parsed, &task["output"]);
                assert_eq!(
                    check_answer(&parsed, &answer).as_ref(),
                    Ok(&task["output"]),
                    "{kind}: stored output breaks the contract"
                );
                println!("{kind}: {}", task["output"]);
            }
            Some("failed") => {
                assert_eq!(task["errorCode"], "WORKFLOW_AI_LOOP_FAILED", "{kind}: {task}");
                assert_eq!(task["output"], Value::Null);
                println!("{kind}: failed cleanly ({})", task["errorMessage"]);
            }
            other => panic!("{kind} ended {other:?}: {task}"),
        }
    }
    println!("{succeeded} of 4 kinds succeeded with the local model");
}
