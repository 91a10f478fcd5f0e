//! What the process-task tests share: an App on a test database and fresh queues, tasks, and
//! SQS events as the event source mapping builds them.
#![allow(dead_code)]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aitasks_contracts::AiRequest;
use aitasks_providers::{
    CallGate, CancellationToken, Completion, HttpProvider, ModelProfile, ModelProfiles, Provider,
    ProviderError, Tap,
};
use aitasks_runtime::{App, Settings};
use aitasks_store::{Created, Task};
use aitasks_testkit::*;
use aws_lambda_events::sqs::{SqsEvent, SqsMessage};
use lambda_runtime::{Context, LambdaEvent};

/// The real client, except that a prompt saying "panic" panics: a bug in our code, which no
/// HTTP answer can provoke, so it is simulated at the trait.
pub(crate) struct PanicsOnRequest(HttpProvider);

impl Provider for PanicsOnRequest {
    async fn run_gated(
        &self,
        profile: &ModelProfile,
        request: &AiRequest,
        gate: &dyn CallGate,
        tap: &dyn Tap,
        cancel: &CancellationToken,
    ) -> Result<Completion, ProviderError> {
        if request.to_value()["prompt"] == "panic" {
            panic!("a bug in one record");
        }
        self.0.run_gated(profile, request, gate, tap, cancel).await
    }
}

pub(crate) async fn app(
    db: &TestDb,
    queues: &TestQueues,
    stub: &StubProvider,
    overrides: &[(&str, &str)],
) -> App<PanicsOnRequest> {
    let variables = app_env(db, queues, stub, overrides);
    let lookup = |name: &str| variables.get(name).cloned();
    let settings = Settings::from_lookup(lookup).unwrap();
    let profiles = ModelProfiles::from_lookup(lookup).unwrap();
    let provider = PanicsOnRequest(HttpProvider::new(Duration::from_secs(5)).unwrap());
    App::new(settings, profiles, provider, queues.sqs.clone()).unwrap()
}

pub(crate) async fn task(db: &TestDb, key: &str, prompt: &str, max_attempts: i32) -> Task {
    let mut new = new_task(APP, app_owner("s"), key);
    new.request["prompt"] = serde_json::json!(prompt);
    new.max_attempts = max_attempts;
    match aitasks_store::create_task(&db.client().await, &new).await.unwrap() {
        Created::New(task) => task,
        Created::Existing(_) => unreachable!("fresh key"),
    }
}

pub(crate) fn event(tasks: &[&Task], within: Duration) -> LambdaEvent<SqsEvent> {
    let mut event = SqsEvent::default();
    event.records = tasks
        .iter()
        .map(|task| {
            let mut message = SqsMessage::default();
            message.message_id = Some(format!("m-{}", task.effect_key));
            message.receipt_handle = Some(format!("r-{}", task.effect_key));
            message.body = Some(format!("{{\"taskId\":\"{}\"}}", task.id));
            message.attributes.insert("ApproximateReceiveCount".into(), "1".into());
            message
        })
        .collect();
    let mut context = Context::default();
    context.deadline =
        SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64 + within.as_millis() as u64;
    LambdaEvent::new(event, context)
}
