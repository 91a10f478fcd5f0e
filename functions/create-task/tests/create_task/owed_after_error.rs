//! Issue 51 inserts a task already marked sent. A request that fails after its insert and before
//! its send (here: the store refusing to attach the callback) must leave the task owed, for the
//! sweeper's next run: the caller's retry finds the task existing and sends nothing, so a task
//! left marked sent would wait for the lost-message duty (`AITASK_RESEND_AFTER_MS`, 5 minutes).

use aitasks_contracts::AppId;
use aitasks_runtime::api;
use aitasks_testkit::*;
use serde_json::{json, Value};

fn create(effect_key: &str, token: &str) -> Value {
    json!({"owner": {"scopeId": "docs"}, "stepKey": "classify", "effectKey": effect_key, "modelId": "default",
           "request": {"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"}, "choices": ["pos", "neg"]},
           "callback": {"stepFunctions": {"taskToken": token}}})
}

/// A stack whose store fails after the insert commits: attaching a callback whose token is `boom`
/// breaks a constraint (a real store failure, not a branch in our code).
struct Refusing {
    db: TestDb,
    app: aitasks_runtime::App,
    tenant: AppId,
    _queues: TestQueues,
    _stub: StubProvider,
}

impl Refusing {
    async fn start() -> Refusing {
        let db = TestDb::new().await;
        let queues = TestQueues::create(5, 30).await;
        let stub = StubProvider::start().await;
        let app = test_app(&db, &queues, &stub, &[]);
        db.sql_as_owner(
            "ALTER TABLE task_callbacks ADD CONSTRAINT fail_attach CHECK (token <> 'boom') NOT VALID",
        )
        .await;
        Refusing { db, app, tenant: AppId::parse(APP).unwrap(), _queues: queues, _stub: stub }
    }
}

async fn owed(db: &TestDb) -> i64 {
    db.count("SELECT count(*) FROM tasks WHERE status = 'queued' AND message_sent_at IS NULL").await
}

#[tokio::test]
async fn a_create_that_fails_after_its_insert_leaves_its_task_owed_for_the_sweeper() {
    let Refusing { db, app, tenant, .. } = &Refusing::start().await;
    let body = create("k", "boom").to_string();
    assert!(api::create_task(app, tenant, body.as_bytes()).await.is_err(), "the attach failed");
    assert_eq!(db.count("SELECT count(*) FROM tasks").await, 1, "the insert committed");
    assert_eq!(owed(db).await, 1, "no message went out: owed, for the sweeper's next run");
    // The caller's retry finds the task and sends nothing: it stays owed.
    db.sql_as_owner("ALTER TABLE task_callbacks DROP CONSTRAINT fail_attach").await;
    assert!(!api::create_task(app, tenant, body.as_bytes()).await.unwrap().is_new());
    assert_eq!(owed(db).await, 1);
}

#[tokio::test]
async fn a_bulk_create_that_fails_after_its_inserts_leaves_every_new_task_owed() {
    let Refusing { db, app, tenant, .. } = &Refusing::start().await;
    let items: Vec<Value> =
        (0..3).map(|i| create(&format!("k{i}"), if i == 2 { "boom" } else { "fine" })).collect();
    let body = json!({"tasks": items}).to_string();
    assert!(api::create_many(app, tenant, body.as_bytes()).await.is_err(), "the attach failed");
    assert_eq!(db.count("SELECT count(*) FROM tasks").await, 3, "the inserts committed");
    assert_eq!(owed(db).await, 3, "no message went out for any of them");
}
