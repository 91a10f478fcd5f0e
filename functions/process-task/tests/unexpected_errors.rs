//! An unexpected error in one record (a panic, a stored request that no longer parses) ends that
//! task's attempt as WORKFLOW_AI_RUNTIME_ERROR, retryable as the reference has it, and the rest
//! of the batch is processed as usual.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aitasks_contracts::AiRequest;
use aitasks_providers::{
    CancellationToken, Completion, ModelProfile, ModelProfiles, OpenAiClient, Provider, ProviderError,
};
use aitasks_runtime::{App, Settings};
use aitasks_store::{Created, Task};
use aitasks_testkit::*;
use aws_lambda_events::sqs::{SqsEvent, SqsMessage};
use lambda_runtime::{Context, LambdaEvent};

/// The real client, except that a prompt saying "panic" panics: a bug in our code, which no
/// HTTP answer can provoke, so it is simulated at the trait.
struct PanicsOnRequest(OpenAiClient);

impl Provider for PanicsOnRequest {
    async fn run(
        &self,
        profile: &ModelProfile,
        request: &AiRequest,
        cancel: &CancellationToken,
    ) -> Result<Completion, ProviderError> {
        if request.to_value()["prompt"] == "panic" {
            panic!("a bug in one record");
        }
        self.0.run(profile, request, cancel).await
    }
}

async fn app(
    db: &TestDb,
    queues: &TestQueues,
    stub: &StubProvider,
    max_attempts: &str,
) -> App<PanicsOnRequest> {
    let variables: HashMap<&str, String> = HashMap::from([
        ("DATABASE_URL", db.app_url.clone()),
        ("AITASK_DB_CA_FILE", ca_file().map(|p| p.display().to_string()).unwrap_or_default()),
        ("AITASK_TASK_QUEUE_URL", queues.tasks.clone()),
        ("AITASK_EVENTS_QUEUE_URL", queues.events.clone()),
        ("OPENAI_BASE_URL", stub.base_url.clone()),
        ("OPENAI_API_KEY", STUB_API_KEY.to_owned()),
        ("AITASK_MAX_ATTEMPTS", max_attempts.to_owned()),
    ]);
    let lookup = |name: &str| variables.get(name).cloned().filter(|v| !v.is_empty());
    let settings = Settings::from_lookup(lookup).unwrap();
    let profiles = ModelProfiles::from_lookup(lookup).unwrap();
    let provider = PanicsOnRequest(OpenAiClient::new(Duration::from_secs(5)).unwrap());
    App::new(settings, profiles, provider, queues.sqs.clone()).unwrap()
}

async fn task(db: &TestDb, key: &str, prompt: &str, max_attempts: i32) -> Task {
    let mut new = new_task(APP, app_owner("s"), key);
    new.request["prompt"] = serde_json::json!(prompt);
    new.max_attempts = max_attempts;
    match aitasks_store::create_task(&db.client().await, &new).await.unwrap() {
        Created::New(task) => task,
        Created::Existing(_) => unreachable!("fresh key"),
    }
}

fn event(tasks: &[&Task]) -> LambdaEvent<SqsEvent> {
    let mut event = SqsEvent::default();
    event.records = tasks
        .iter()
        .map(|task| {
            let mut message = SqsMessage::default();
            message.message_id = Some(format!("m-{}", task.effect_key));
            message.receipt_handle = Some(format!("r-{}", task.effect_key));
            message.body = Some(format!("{{\"taskId\":\"{}\"}}", task.id));
            message
        })
        .collect();
    let mut context = Context::default();
    context.deadline = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64 + 60_000;
    LambdaEvent::new(event, context)
}

async fn state(db: &TestDb, task: &Task) -> (String, Option<String>, Option<String>) {
    let row = db
        .client()
        .await
        .query_one("SELECT status, error_code, error_message FROM tasks WHERE id = $1", &[&task.id])
        .await
        .unwrap();
    (row.get(0), row.get(1), row.get(2))
}

#[tokio::test]
async fn a_panic_or_an_unreadable_request_ends_only_its_own_task() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = app(&db, &queues, &stub, "3").await;
    let good = task(&db, "good", "Sentiment?", 3).await;
    let panics = task(&db, "panics", "panic", 3).await;
    let unreadable = task(&db, "unreadable", "Sentiment?", 3).await;
    // A stored request that no longer parses (written by an older version, or by hand).
    db.sql(&format!("UPDATE tasks SET request = request - 'choices' WHERE id = '{}'", unreadable.id)).await;

    let response = process_task::handle(&app, event(&[&good, &panics, &unreadable])).await.unwrap();
    let mut retried: Vec<String> =
        response.batch_item_failures.iter().map(|f| f.item_identifier.clone()).collect();
    retried.sort();
    assert_eq!(retried, ["m-panics", "m-unreadable"], "only the two broken records come back");

    assert_eq!(state(&db, &good).await.0, "succeeded", "the rest of the batch ran");
    for broken in [&panics, &unreadable] {
        let (status, code, message) = state(&db, broken).await;
        assert_eq!(status, "queued", "retryable: requeued for its next attempt");
        assert_eq!(code.as_deref(), Some("WORKFLOW_AI_RUNTIME_ERROR"));
        let message = message.unwrap_or_default();
        assert!(!message.contains("a bug in one record") && !message.contains("choices"), "{message}");
    }
    assert_eq!(stub.calls(), 1, "only the good record reached the provider");
}

#[tokio::test]
async fn on_the_last_attempt_it_fails_the_task_with_an_event() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app = app(&db, &queues, &stub, "1").await;
    let panics = task(&db, "panics", "panic", 1).await;

    let response = process_task::handle(&app, event(&[&panics])).await.unwrap();
    assert!(response.batch_item_failures.is_empty(), "settled: nothing to deliver again");
    let (status, code, _) = state(&db, &panics).await;
    assert_eq!((status.as_str(), code.as_deref()), ("failed", Some("WORKFLOW_AI_RUNTIME_ERROR")));
    let events = queues.drain(&queues.events, Duration::from_secs(2)).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(events[0].contains("WORKFLOW_AI_RUNTIME_ERROR"), "{}", events[0]);
}
