//! A finished batch's results, through the sweeper's batcher against a stub of OpenAI's Files and
//! Batches API (issue 36): a result file over 64 MiB is read once, as a stream, and settles every
//! task; a batch given up keeps the answers the provider gave before its cancel and sends only
//! the rest on-demand, and one whose results fail to read is read again within its grace; a row
//! the store refuses costs the rest of its batch nothing, whether its line is an answer or an
//! error.

use aitasks_testkit::*;
use serde_json::{json, Value};
use uuid::Uuid;

const APP: &str = "app-batch-results";

/// An app whose `batchable` profile batches through a stub, `max_records` a batch, and the
/// parts it points at (kept alive with it).
struct Deferred {
    db: TestDb,
    batches: StubBatches,
    app: aitasks_runtime::App,
    _queues: TestQueues,
    _stub: StubProvider,
}

async fn deferred(max_records: u32) -> Deferred {
    let db = TestDb::new().await;
    let queues = TestQueues::create(3, 30).await;
    let stub = StubProvider::start().await;
    let batches = StubBatches::start().await;
    let models = json!({
        "batchable": {"provider": "openai", "model": "stub-batch-model", "baseUrl": batches.base_url,
                      "apiKeyEnv": "BATCH_KEY",
                      "prices": {"inputPerMillion": 0.2, "outputPerMillion": 0.8},
                      "batch": {"maxRecords": max_records, "maxWaitSeconds": 3600,
                                "prices": {"inputPerMillion": 0.1, "outputPerMillion": 0.4}}}
    })
    .to_string();
    let overrides =
        [("AITASK_MODELS", models.as_str()), ("BATCH_KEY", BATCH_STUB_KEY), ("AITASK_BATCH_POLL_MS", "200")];
    let app = test_app(&db, &queues, &stub, &overrides);
    Deferred { db, batches, app, _queues: queues, _stub: stub }
}

/// `n` deferred tasks of `request` awaiting a batch of the `batchable` profile: their ids.
async fn defer(deferred: &Deferred, n: usize, request: &Value) -> Vec<Uuid> {
    let client = deferred.db.client().await;
    let profile = deferred.app.profiles.resolve("batchable").unwrap();
    let mut ids = Vec::new();
    for i in 0..n {
        let mut task = new_task(APP, app_owner("nightly"), &format!("deferred-{i}"));
        task.kind = request["kind"].as_str().unwrap().to_owned();
        task.request = request.clone();
        task.input_hash = hash_of(request);
        task.model_id = "batchable".to_owned();
        task.model_config_hash = Some(profile.config_hash());
        task.deferred_window_ms = Some(86_400_000);
        task.awaiting_batch = true;
        ids.push(aitasks_store::create_task(&client, &task).await.unwrap().task().id);
    }
    ids
}

/// Sweep (every open batch due at once) until `query` counts `expected`, or `sweeps` have run:
/// the last count.
async fn sweep_until(deferred: &Deferred, query: &str, expected: i64, sweeps: usize) -> i64 {
    let mut count = deferred.db.count(query).await;
    for _ in 0..sweeps {
        if count == expected {
            break;
        }
        aitasks_runtime::sweeper::sweep(&deferred.app).await;
        deferred.db.sql("UPDATE task_batches SET due_at = now() WHERE outcome IS NULL").await;
        count = deferred.db.count(query).await;
    }
    count
}

/// The database refuses every update of a task row that `condition` (on `NEW`) holds for, as it
/// would a value it cannot store.
async fn refuse_updates(db: &TestDb, condition: &str) {
    db.sql_as_owner(&format!(
        "CREATE FUNCTION refuse_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
           RAISE EXCEPTION 'this row cannot be stored'; END $$; \
         CREATE TRIGGER refuse_row BEFORE UPDATE ON tasks FOR EACH ROW \
           WHEN ({condition}) EXECUTE FUNCTION refuse_row();"
    ))
    .await;
}

const SUCCEEDED_ONCE: &str = "SELECT count(*) FROM tasks WHERE status = 'succeeded' AND attempts = 1";

#[tokio::test]
async fn a_result_file_over_64_mib_is_read_once_and_settles_every_task() {
    // 176 long answers, each a 100,000-character text of quotes: JSON-escaped twice in an
    // OpenAI line (the answer is a JSON string inside the line's JSON), 400 kB a line.
    let deferred = deferred(176).await;
    deferred.batches.answer_with_text("\"".repeat(100_000));
    let request = json!({"kind": "generate_text", "prompt": "Write it out.", "maxOutputChars": 100_000});
    defer(&deferred, 176, &request).await;
    let settled = sweep_until(&deferred, SUCCEEDED_ONCE, 176, 12).await;
    let (bytes, reads) = (deferred.batches.result_bytes(), deferred.batches.file_reads());
    assert!(bytes > 64 * 1024 * 1024, "the result file is over 64 MiB: {bytes} bytes");
    assert_eq!(settled, 176, "every task settled from the {bytes}-byte file (read {reads} times)");
    assert_eq!(reads, 1, "the file was read once");
    assert_eq!(deferred.batches.on_demand_calls(), 0, "nothing paid twice");
    let stored = deferred.db.count("SELECT count(*) FROM tasks WHERE length(output #>> '{}') = 100000").await;
    assert_eq!(stored, 176, "each whole answer stored");
    let ended = deferred.db.count("SELECT count(*) FROM task_batches WHERE outcome = 'completed'").await;
    assert_eq!(ended, 1);
}

#[tokio::test]
async fn a_given_up_batch_keeps_the_answers_given_before_its_cancel() {
    let deferred = deferred(10).await;
    let ids = defer(&deferred, 10, &classify_request()).await;
    let batches = &deferred.batches;
    batches.hold();
    batches.answer_before_end(4);
    let submitted = "SELECT count(*) FROM task_batches WHERE state = 'submitted'";
    assert_eq!(sweep_until(&deferred, submitted, 1, 3).await, 1, "the batch went out");
    // Its tasks' windows come within the slack of their end before the provider answered.
    deferred.db.sql("UPDATE task_batches SET give_up_at = now() - interval '1 second', due_at = now()").await;
    aitasks_runtime::sweeper::sweep(&deferred.app).await;
    assert_eq!(batches.cancels(), 1, "canceled at the provider");
    // The provider ends it with the four lines it answered before the cancel.
    batches.advance();
    deferred.db.sql("UPDATE task_batches SET due_at = now()").await;
    aitasks_runtime::sweeper::sweep(&deferred.app).await;
    let settled = deferred.db.count(SUCCEEDED_ONCE).await;
    let queued = deferred
        .db
        .count("SELECT count(*) FROM tasks WHERE status = 'queued' AND attempts = 0 AND batch_id IS NULL")
        .await;
    assert_eq!((settled, queued), (4, 6), "the answered four kept, the six others on-demand, uncounted");
    let usage = deferred.db.count("SELECT count(*) FROM tasks WHERE (usage->>'calls')::int = 1").await;
    assert_eq!(usage, 4, "each kept answer billed once, at the batch's prices");
    let ended = deferred.db.count("SELECT count(*) FROM task_batches WHERE outcome = 'given_up'").await;
    assert_eq!(ended, 1);
    assert_eq!(ids.len(), 10);
}

#[tokio::test]
async fn a_given_up_batch_whose_results_read_fails_once_reads_them_again() {
    let deferred = deferred(10).await;
    defer(&deferred, 10, &classify_request()).await;
    let batches = &deferred.batches;
    batches.hold();
    let submitted = "SELECT count(*) FROM task_batches WHERE state = 'submitted'";
    assert_eq!(sweep_until(&deferred, submitted, 1, 3).await, 1, "the batch went out");
    // The provider completes it just as its tasks' windows come within the slack of their end,
    // and its output file's first read fails.
    batches.advance();
    batches.advance();
    batches.fail_file_reads(1);
    deferred.db.sql("UPDATE task_batches SET give_up_at = now() - interval '1 second', due_at = now()").await;
    aitasks_runtime::sweeper::sweep(&deferred.app).await;
    deferred.db.sql("UPDATE task_batches SET due_at = now()").await;
    aitasks_runtime::sweeper::sweep(&deferred.app).await;
    let settled = deferred.db.count(SUCCEEDED_ONCE).await;
    let queued = deferred.db.count("SELECT count(*) FROM tasks WHERE status = 'queued'").await;
    let reads = batches.file_reads();
    assert_eq!((settled, queued), (10, 0), "every answer read and kept, none sent on-demand ({reads} reads)");
    assert_eq!(reads, 2, "read again after the failed read");
    assert_eq!(batches.cancels(), 0, "a completed batch is not canceled");
    assert_eq!(deferred.db.count("SELECT count(*) FROM task_batches WHERE outcome = 'completed'").await, 1);
}

#[tokio::test]
async fn a_row_the_store_refuses_costs_the_rest_of_its_batch_nothing() {
    let deferred = deferred(10).await;
    let ids = defer(&deferred, 10, &classify_request()).await;
    refuse_updates(&deferred.db, &format!("NEW.status = 'succeeded' AND NEW.id = '{}'", ids[3])).await;
    let ended = "SELECT count(*) FROM task_batches WHERE outcome IS NOT NULL";
    sweep_until(&deferred, ended, 1, 8).await;
    let settled = deferred.db.count(SUCCEEDED_ONCE).await;
    assert_eq!(settled, 9, "the nine others settled by the batch's look");
    let refused = deferred
        .db
        .count(&format!(
            "SELECT count(*) FROM tasks WHERE id = '{}' AND status = 'queued' AND batch_id IS NULL",
            ids[3]
        ))
        .await;
    assert_eq!(refused, 1, "the refused one goes on-demand");
    assert_eq!(deferred.db.count("SELECT count(*) FROM task_batches WHERE outcome = 'completed'").await, 1);
}

/// The batcher's settlement falls back row by row as the worker's does: one line's output the
/// database refuses fails the page's group statement, and every other answer is then completed
/// alone; an error line whose failure is refused costs the other error lines nothing either. The
/// two refused tasks stay in the batch and go back on-demand, uncounted.
#[tokio::test]
async fn one_lines_output_the_store_refuses_costs_the_other_lines_nothing() {
    let deferred = deferred(10).await;
    let request = json!({"kind": "generate_text", "prompt": "Say hello.", "maxOutputChars": 200});
    let ids = defer(&deferred, 10, &request).await;
    let refused_text = "an answer the database refuses";
    deferred.batches.script(ids[3], LineScript::Says(refused_text.to_owned()));
    deferred.batches.script(ids[6], LineScript::Error(400));
    deferred.batches.script(ids[8], LineScript::Error(400));
    let refused = format!(
        "(NEW.status = 'succeeded' AND NEW.output::text LIKE '%{refused_text}%') \
         OR (NEW.status = 'failed' AND NEW.id = '{}')",
        ids[8]
    );
    refuse_updates(&deferred.db, &refused).await;
    let ended = "SELECT count(*) FROM task_batches WHERE outcome IS NOT NULL";
    assert_eq!(sweep_until(&deferred, ended, 1, 8).await, 1, "the batch ended");
    assert_eq!(
        deferred.db.count(SUCCEEDED_ONCE).await,
        7,
        "the seven other answers settled on their first attempt"
    );
    let status = |id: Uuid| {
        format!("SELECT count(*) FROM tasks WHERE id = '{id}' AND status = 'failed' AND attempts = 1 AND error_code = 'WORKFLOW_AI_PROVIDER_ERROR'")
    };
    assert_eq!(deferred.db.count(&status(ids[6])).await, 1, "the other error line failed its task");
    for refused in [ids[3], ids[8]] {
        let back = format!(
            "SELECT count(*) FROM tasks WHERE id = '{refused}' AND status = 'queued' AND attempts = 0 AND batch_id IS NULL"
        );
        assert_eq!(deferred.db.count(&back).await, 1, "a refused line's task goes on-demand, uncounted");
    }
    assert_eq!(
        deferred.db.count("SELECT count(*) FROM task_events").await,
        8,
        "one event for each task that ended"
    );
    let kept = format!("SELECT count(*) FROM tasks WHERE output::text LIKE '%{refused_text}%'");
    assert_eq!(deferred.db.count(&kept).await, 0);
}
