//! Many creates in one statement (`create_tasks`): per-item answers, round trips, and batches
//! that overlap running side by side without a deadlock or a key stored twice.

use std::sync::Arc;

use aitasks_store as store;
use aitasks_testkit::*;
use futures::future::join_all;
use store::{Created, StoreError, TaskOwner, TaskStatus};

fn app_owned(key: &str) -> store::NewTask {
    new_task(APP, TaskOwner::Application { scope_id: "inbox".into(), usage_subject: None }, key)
}

#[tokio::test]
async fn each_item_is_answered_in_order_in_two_round_trips() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let run = run(&db, APP).await;
    let canceled = run_canceled(&db).await;
    store::create_task(&client, &app_owned("taken")).await.unwrap();
    let items = [
        new_task(APP, TaskOwner::Run(run.id), "r1"),
        app_owned("a1"),
        app_owned("taken"),
        new_task(APP, TaskOwner::Run(uuid::Uuid::now_v7()), "no-run"),
        new_task(APP, TaskOwner::Run(canceled), "canceled"),
        app_owned("a1"),
        new_task("another-app", TaskOwner::Run(run.id), "not-yours"),
    ];
    // Warm the statement cache, then count what the server receives.
    store::create_tasks(&client, APP, &[app_owned("warm")]).await.unwrap();
    db.reset_statements().await;
    let answers = store::create_tasks(&client, APP, &items[..6]).await.unwrap();
    assert_eq!(db.statements_seen().await, 2, "one insert for all, one read of the taken keys");
    let shape: Vec<&str> = answers
        .iter()
        .map(|answer| match answer {
            Ok(Created::New(_)) => "new",
            Ok(Created::Existing(_)) => "existing",
            Err(StoreError::RunNotFound) => "no run",
            Err(StoreError::RunUnavailable) => "canceled run",
            Err(_) => "other",
        })
        .collect();
    assert_eq!(shape, ["new", "new", "existing", "no run", "canceled run", "existing"]);
    let new_run_task = answers[0].as_ref().unwrap().task();
    assert_eq!(
        (new_run_task.status, new_run_task.scope_id.as_deref(), new_run_task.usage_user_id.as_deref()),
        (TaskStatus::Queued, Some("scope-1"), Some("user-9")),
        "a run's task takes the run's scope and actor, as a single create does"
    );
    assert_eq!(
        store::get_task(&client, APP, new_run_task.id).await.unwrap().as_ref(),
        Some(new_run_task),
        "each answer is the task as stored"
    );
    assert_eq!(answers[5].as_ref().unwrap().task().id, answers[1].as_ref().unwrap().task().id);
    // A run of another application is no run at all.
    let other = store::create_tasks(&client, "another-app", &items[6..]).await.unwrap();
    assert!(matches!(other[0], Err(StoreError::RunNotFound)));
    assert_eq!(db.count("SELECT count(*) FROM tasks").await, 4, "taken, warm, r1, a1");
}

/// A key given twice in one batch is created by its earlier item: rows go in sorted by key and
/// then by item order, so the later item is the one that finds the key taken.
#[tokio::test]
async fn a_key_given_twice_is_created_by_its_earlier_item() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let keys: Vec<String> = (0..300).map(|i| format!("k{:03}", (i * 7) % 300)).collect();
    let mut items = Vec::new();
    for (copy, order) in [("first", false), ("second", true), ("third", false)] {
        let mut these: Vec<store::NewTask> = keys
            .iter()
            .map(|key| {
                let mut task = app_owned(key);
                task.step_key = copy.into();
                task
            })
            .collect();
        if order {
            these.reverse();
        }
        items.extend(these);
    }
    let answers = store::create_tasks(&client, APP, &items).await.unwrap();
    let new: Vec<&str> = answers
        .iter()
        .zip(&items)
        .filter(|(answer, _)| matches!(answer, Ok(Created::New(_))))
        .map(|(_, item)| item.step_key.as_str())
        .collect();
    assert_eq!(new.len(), 300, "each key created once");
    assert!(new.iter().all(|copy| *copy == "first"), "created by the earlier item: {new:?}");
    for (i, answer) in answers.iter().enumerate().skip(300) {
        let key = &items[i].effect_key;
        let first = answers[keys.iter().position(|k| k == key).unwrap()].as_ref().unwrap().task();
        assert_eq!(answer.as_ref().unwrap().task().id, first.id, "the later items answer with that task");
    }
}

async fn run_canceled(db: &TestDb) -> uuid::Uuid {
    let run = run(db, APP).await;
    store::cancel_run(&db.client().await, APP, run.id).await.unwrap();
    run.id
}

/// Two clients sending the same keys in opposite orders, many times over: rows go in sorted by
/// key, so one waits for the other instead of each holding a key the other needs.
#[tokio::test]
async fn overlapping_batches_never_deadlock_and_store_each_key_once() {
    let db = Arc::new(TestDb::new().await);
    let keys: Vec<String> = (0..200).map(|i| format!("k{i:03}")).collect();
    let rounds = (0..8).map(|round| {
        let db = db.clone();
        let mut mine: Vec<store::NewTask> = keys.iter().map(|k| app_owned(&format!("{round}/{k}"))).collect();
        async move {
            let mut reversed = mine.clone();
            reversed.reverse();
            let (a, b) = (db.client().await, db.client().await);
            let (first, second) =
                tokio::join!(store::create_tasks(&a, APP, &mine), store::create_tasks(&b, APP, &reversed));
            let (first, second) = (first.expect("no deadlock"), second.expect("no deadlock"));
            let new = first.iter().chain(&second).filter(|r| matches!(r, Ok(Created::New(_)))).count();
            assert_eq!(new, mine.len(), "each key created once, found by the other batch");
            mine.clear();
        }
    });
    join_all(rounds).await;
    assert_eq!(db.count("SELECT count(*) FROM tasks").await, 8 * 200);
}

/// A batch's records claimed in one statement, and completed in one: each answer as the single
/// statements would give it, and each write fenced the same way.
#[tokio::test]
async fn a_batch_is_claimed_and_completed_in_one_statement_each() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let created =
        store::create_tasks(&client, APP, &(0..10).map(|i| app_owned(&format!("t{i}"))).collect::<Vec<_>>())
            .await
            .unwrap();
    let ids: Vec<uuid::Uuid> = created.iter().map(|c| c.as_ref().unwrap().task().id).collect();
    // Warm the statement cache on other tasks, then count.
    let warm = store::create_tasks(&client, APP, &[app_owned("warm")]).await.unwrap();
    let warm_id = warm[0].as_ref().unwrap().task().id;
    let warmed = store::claim_by(&client, &[warm_id], &claim_mark()).await.unwrap();
    let store::Claim::Claimed(warm_task) = &warmed[0] else { panic!("claimed") };
    store::complete_many(&client, &[(warm_task.lease(), &serde_json::json!("ham"), None)], false)
        .await
        .unwrap();

    db.reset_statements().await;
    let claims = store::claim_by(&client, &ids, &claim_mark()).await.unwrap();
    assert_eq!(db.statements_seen().await, 1, "ten claims, one statement");
    let tasks: Vec<store::Task> = claims
        .into_iter()
        .map(|claim| match claim {
            store::Claim::Claimed(task) => task,
            other => panic!("claimed: {other:?}"),
        })
        .collect();
    assert!(tasks.iter().all(|t| t.status == TaskStatus::Running && t.attempts == 1));
    assert_eq!(tasks.iter().map(|t| t.id).collect::<Vec<_>>(), ids, "answered in record order");

    // One lease goes stale (the task was requeued and claimed again), one task's cancel is requested.
    let output = serde_json::json!("spam");
    store::requeue_attempt(&client, tasks[8].lease(), aitasks_contracts::ErrorCode::ProviderError, "blip")
        .await
        .unwrap();
    store::request_cancel(&client, APP, tasks[9].id).await.unwrap();
    let attempts: Vec<_> = tasks.iter().map(|t| (t.lease(), &output, None)).collect();
    db.reset_statements().await;
    let settled = store::complete_many(&client, &attempts, false).await.unwrap();
    assert_eq!(db.statements_seen().await, 1, "ten settlements and their events, one statement");
    let written = settled.iter().filter(|s| matches!(s, store::Fenced::Written(_))).count();
    assert_eq!(written, 8);
    assert!(matches!(settled[8], store::Fenced::Lost) && matches!(settled[9], store::Fenced::Lost));
    assert_eq!(
        db.count("SELECT count(*) FROM tasks WHERE status = 'succeeded' AND output = '\"spam\"'").await,
        8
    );
    assert_eq!(db.count("SELECT count(*) FROM task_events").await, 9, "the warm one's and eight");
}

/// Duplicates, cancels, deletions and tasks already running, all in one batch.
#[tokio::test]
async fn every_record_that_is_not_claimed_says_why() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let keys = ["a", "b", "c", "d"];
    let created = store::create_tasks(&client, APP, &keys.map(app_owned)).await.unwrap();
    let [a, b, c, d]: [uuid::Uuid; 4] = std::array::from_fn(|i| created[i].as_ref().unwrap().task().id);
    store::request_cancel(&client, APP, b).await.unwrap(); // queued: canceled at once
    let running = claim_one(&client, c).await;
    assert!(matches!(running, store::Claim::Claimed(_)));
    let b_flagged = store::get_task(&client, APP, b).await.unwrap().unwrap();
    assert_eq!(b_flagged.status, TaskStatus::Canceled);
    client.batch_execute(&format!("DELETE FROM tasks WHERE id = '{d}'")).await.unwrap();
    let claims = store::claim_by(&client, &[a, a, b, c, d, d], &claim_mark()).await.unwrap();
    let shape: Vec<String> = claims
        .iter()
        .map(|claim| match claim {
            store::Claim::Claimed(_) => "claimed".into(),
            store::Claim::Canceled(_) => "canceled".into(),
            store::Claim::NotClaimable(status) => format!("not claimable ({})", status.as_str()),
            store::Claim::Missing => "missing".into(),
            store::Claim::Busy => "busy".into(),
        })
        .collect();
    assert_eq!(
        shape,
        [
            "claimed",
            "not claimable (running)",
            "not claimable (canceled)",
            "not claimable (running)",
            "missing",
            "missing"
        ]
    );
}

/// A task given twice in one group (a stale worker's attempt beside the fresh one's) is completed
/// once, with the output of the attempt it is running, and each item is answered for itself.
#[tokio::test]
async fn a_task_given_twice_is_completed_by_the_attempt_it_runs() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let created =
        store::create_tasks(&client, APP, &[app_owned("twice"), app_owned("beside")]).await.unwrap();
    let ids: Vec<uuid::Uuid> = created.iter().map(|c| c.as_ref().unwrap().task().id).collect();
    let claimed = |claims: Vec<store::Claim>| -> Vec<store::Task> {
        claims
            .into_iter()
            .map(|claim| match claim {
                store::Claim::Claimed(task) => task,
                other => panic!("claimed: {other:?}"),
            })
            .collect()
    };
    let first = claimed(store::claim_by(&client, &ids, &claim_mark()).await.unwrap());
    let stale = first[0].lease();
    store::requeue_attempt(&client, stale, aitasks_contracts::ErrorCode::ProviderError, "blip")
        .await
        .unwrap();
    let fresh = claimed(store::claim_by(&client, &ids[..1], &claim_mark()).await.unwrap())[0].lease();
    let (old, new, beside) = (serde_json::json!("stale"), serde_json::json!("fresh"), serde_json::json!("b"));
    let settled = store::complete_many(
        &client,
        &[(stale, &old, None), (first[1].lease(), &beside, None), (fresh, &new, None)],
        false,
    )
    .await
    .unwrap();
    let shape: Vec<bool> = settled.iter().map(|s| matches!(s, store::Fenced::Written(_))).collect();
    assert_eq!(shape, [false, true, true], "the stale attempt lost, the other two written");
    let query =
        |id: uuid::Uuid| format!("SELECT count(*) FROM tasks WHERE id = '{id}' AND status = 'succeeded'");
    assert_eq!(db.count(&format!("{} AND output = '\"fresh\"' AND attempts = 2", query(ids[0]))).await, 1);
    assert_eq!(db.count(&format!("{} AND output = '\"b\"'", query(ids[1]))).await, 1);
    assert_eq!(db.count(&format!("SELECT count(*) FROM task_events WHERE task_id = '{}'", ids[0])).await, 1);
}
