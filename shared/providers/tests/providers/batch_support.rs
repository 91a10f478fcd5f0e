//! What the batch tests share: requests, profiles on the stubs, polling a batch to its end.

use std::collections::HashMap;

use aitasks_contracts::{AiRequest, Path};
use aitasks_providers::{
    BatchClient, BatchLine, BatchPhase, LineOutcome, LineResult, ModelProfile, ModelProfiles,
};
use aitasks_testkit::BATCH_STUB_KEY;
use serde_json::{json, Value};
use uuid::Uuid;

pub(crate) fn classify(text: &str) -> AiRequest {
    AiRequest::parse(
        &json!({"kind": "classify", "prompt": "Sentiment?", "input": {"text": text}, "choices": ["pos", "neg"]}),
        &Path::root(),
    )
    .unwrap()
}

/// `n` classify tasks by id, and their ids in order.
pub(crate) fn tasks(n: usize) -> (Vec<Uuid>, HashMap<Uuid, AiRequest>) {
    let ids: Vec<Uuid> = (0..n).map(|_| Uuid::new_v4()).collect();
    let requests = ids.iter().enumerate().map(|(i, id)| (*id, classify(&format!("text {i}")))).collect();
    (ids, requests)
}

pub(crate) fn lines<'a>(ids: &[Uuid], requests: &'a HashMap<Uuid, AiRequest>) -> Vec<BatchLine<'a>> {
    ids.iter().map(|id| BatchLine { task_id: *id, request: &requests[id] }).collect()
}

/// The profile `m` of `entry`, with the stubs' key for either provider.
pub(crate) fn profile(entry: Value) -> ModelProfile {
    let models = json!({"m": entry}).to_string();
    let profiles = ModelProfiles::from_lookup(|name| match name {
        "AITASK_MODELS" => Some(models.clone()),
        "OPENAI_API_KEY" | "ANTHROPIC_API_KEY" => Some(BATCH_STUB_KEY.to_owned()),
        _ => None,
    })
    .unwrap();
    profiles.resolve("m").unwrap().clone()
}

/// Poll until the provider is done with the batch: `(results, stopped)`.
pub(crate) async fn until_done(
    client: &BatchClient,
    profile: &ModelProfile,
    batch: &str,
) -> (Vec<String>, Option<String>) {
    for _ in 0..10 {
        if let BatchPhase::Done { results, stopped } = client.status(profile, batch).await.unwrap() {
            return (results, stopped);
        }
    }
    panic!("the batch {batch} never ended");
}

/// The results of each task, by id.
pub(crate) fn by_task(results: Vec<LineResult>) -> HashMap<Uuid, Vec<LineOutcome>> {
    let mut out: HashMap<Uuid, Vec<LineOutcome>> = HashMap::new();
    for result in results {
        out.entry(result.task_id).or_default().push(result.outcome);
    }
    out
}

pub(crate) fn answered(outcome: &LineOutcome) -> &aitasks_providers::Completion {
    match outcome {
        LineOutcome::Answered(completion) => completion,
        other => panic!("not answered: {other:?}"),
    }
}
