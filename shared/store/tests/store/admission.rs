//! Scoped admission against a real Postgres: exact limits under concurrency, budgets at their
//! edges and their 24 h reset, the result cache, deletion that keeps the history, retention,
//! and the unreleased-sources listing.

use aitasks_contracts::ErrorCode;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use aitasks_store as store;
use aitasks_testkit::*;
use futures::future::join_all;
use serde_json::json;
use store::{
    AdmissionBudget, AdmissionRefusal, Claim, Created, ScopedAdmission, StoreError, TaskOwner, TaskStatus,
};

const ROOMY: AdmissionBudget = ROOMY_BUDGET;

fn admission(source: &str, step: &str, budget: AdmissionBudget) -> ScopedAdmission {
    ScopedAdmission {
        source_id: source.to_owned(),
        cache_key: hex_key(&format!("{source}/{step}")),
        recompute: false,
        budget,
        limits: aitasks_store::ServerLimits::default(),
    }
}

fn hex_key(text: &str) -> String {
    use std::fmt::Write;
    // A stable 64-character key per text (the runtime uses a SHA-256 of the canonical request).
    let mut key = String::new();
    for (i, byte) in text.bytes().cycle().take(32).enumerate() {
        let _ = write!(key, "{:02x}", byte.wrapping_add(i as u8));
    }
    key
}

async fn scoped(
    db: &TestDb,
    scope: &str,
    effect_key: &str,
    admission: &ScopedAdmission,
) -> Result<store::ScopedCreated, StoreError> {
    let mut client = db.client().await;
    store::create_scoped(&mut client, &new_task(APP, app_owner(scope), effect_key), admission).await
}

fn refusal(result: &Result<store::ScopedCreated, StoreError>) -> Option<AdmissionRefusal> {
    match result {
        Err(StoreError::Admission(refusal)) => Some(*refusal),
        _ => None,
    }
}

/// Samples the active scoped tasks (every application's) while creators run.
struct PeakMonitor {
    running: Arc<AtomicBool>,
    peak: Arc<AtomicI64>,
    handle: tokio::task::JoinHandle<u64>,
}

impl PeakMonitor {
    fn start(db: &Arc<TestDb>) -> PeakMonitor {
        let (running, peak) = (Arc::new(AtomicBool::new(true)), Arc::new(AtomicI64::new(0)));
        let handle = tokio::spawn({
            let (db, running, peak) = (db.clone(), running.clone(), peak.clone());
            async move {
                let client = db.client().await;
                let mut samples = 0;
                while running.load(Ordering::Relaxed) {
                    let active: i64 = client
                        .query_one("SELECT count(*) FROM tasks WHERE status IN ('queued', 'running') AND cache_key IS NOT NULL", &[])
                        .await
                        .unwrap()
                        .get(0);
                    peak.fetch_max(active, Ordering::Relaxed);
                    samples += 1;
                }
                samples
            }
        });
        PeakMonitor { running, peak, handle }
    }

    /// The highest count seen, and how many samples.
    async fn stop(self) -> (i64, u64) {
        self.running.store(false, Ordering::Relaxed);
        let samples = self.handle.await.unwrap();
        (self.peak.load(Ordering::Relaxed), samples)
    }
}

async fn complete(db: &TestDb, task_id: uuid::Uuid) {
    let client = db.client().await;
    let Claim::Claimed(task) = claim_one(&client, task_id).await else { panic!("claim") };
    store::complete_attempt(&client, task.lease(), &json!("pos"), None, false).await.unwrap();
}

#[tokio::test]
async fn sixty_four_creators_against_a_burst_of_five_admit_exactly_five() {
    let db = Arc::new(TestDb::new().await);
    let budget = AdmissionBudget { burst: 5, tasks_per_minute: 1, ..ROOMY };
    let creators =
        (0..64).map(|i| {
            let db = db.clone();
            async move {
                scoped(&db, "s1", &format!("k{i}"), &admission("src", &format!("step{i}"), budget)).await
            }
        });
    let results = join_all(creators).await;
    let admitted = results.iter().filter(|r| r.is_ok()).count();
    let limited =
        results.iter().filter(|r| matches!(refusal(r), Some(AdmissionRefusal::RateLimited { .. }))).count();
    assert_eq!((admitted, limited), (5, 59));
    for result in &results {
        if let Some(AdmissionRefusal::RateLimited { retry_after }) = refusal(result) {
            assert!(
                retry_after >= Duration::from_secs(1) && retry_after <= Duration::from_secs(60),
                "{retry_after:?}"
            );
        }
    }
    assert_eq!(db.count("SELECT count(*) FROM tasks").await, 5, "nothing stored for the refused");
    assert_eq!(db.count("SELECT count(*) FROM scope_admissions").await, 5);
}

#[tokio::test]
async fn a_scope_cap_of_four_holds_and_frees_a_slot_when_a_task_ends() {
    let db = Arc::new(TestDb::new().await);
    let budget = AdmissionBudget { scope_concurrent: 4, ..ROOMY };
    let creators =
        (0..50).map(|i| {
            let db = db.clone();
            async move {
                scoped(&db, "s1", &format!("k{i}"), &admission("src", &format!("step{i}"), budget)).await
            }
        });
    let results = join_all(creators).await;
    let admitted: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(admitted.len(), 4);
    assert_eq!(results.iter().filter(|r| refusal(r) == Some(AdmissionRefusal::Capacity)).count(), 46);
    // Another scope is not held back by this one.
    assert!(scoped(&db, "s2", "other", &admission("src", "x", budget)).await.is_ok());

    complete(&db, admitted[0].created.task().id).await;
    assert!(
        scoped(&db, "s1", "after", &admission("src", "after", budget)).await.is_ok(),
        "a finished task frees a slot"
    );
    assert_eq!(
        refusal(&scoped(&db, "s1", "again", &admission("src", "again", budget)).await),
        Some(AdmissionRefusal::Capacity)
    );
}

#[tokio::test]
async fn a_global_cap_of_ten_is_never_exceeded_while_two_hundred_creators_run() {
    let db = Arc::new(TestDb::new().await);
    let budget = AdmissionBudget { global_concurrent: 10, ..ROOMY };
    let monitor = PeakMonitor::start(&db);
    let creators = (0..200).map(|i| {
        let db = db.clone();
        async move {
            let scope = format!("scope-{}", i % 20);
            let result =
                scoped(&db, &scope, &format!("k{i}"), &admission("src", &format!("step{i}"), budget)).await;
            if let Ok(created) = &result {
                // Hold the slot briefly, then finish, so that admissions keep changing.
                tokio::time::sleep(Duration::from_millis((i % 7) as u64 * 3)).await;
                complete(&db, created.created.task().id).await;
            }
            result.is_ok()
        }
    });
    let admitted = join_all(creators).await.into_iter().filter(|ok| *ok).count();
    let (peak, samples) = monitor.stop().await;
    println!("admitted {admitted} of 200, peak active {peak}, {samples} samples");
    assert!(peak <= 10, "peak active {peak} over the cap");
    assert!(admitted >= 10, "slots were reused: {admitted}");
    assert!(samples > 10, "the monitor sampled while creators ran");
    assert_eq!(
        db.count("SELECT COALESCE(sum(active), 0)::bigint FROM app_concurrency").await,
        0,
        "the counter returns to zero"
    );
}

/// `cap + 24` admissions from 24 creators, each `(app, admission)` of its index: how many were
/// admitted and how many refused for capacity. Any other refusal or error fails the test.
async fn admit_past_a_cap(
    db: &Arc<TestDb>,
    cap: i64,
    of: impl Fn(usize) -> (String, ScopedAdmission) + Clone,
) -> (i64, usize) {
    let total = cap as usize + 24;
    let next = Arc::new(AtomicI64::new(0));
    let creators = (0..24).map(|_| {
        let (db, next, of) = (db.clone(), next.clone(), of.clone());
        async move {
            let mut outcomes = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                if i >= total {
                    return outcomes;
                }
                let (app, admission) = of(i);
                let scope = format!("scope-{}", i % 50);
                outcomes.push(match scoped_as(&db, &app, &scope, &format!("k{i}"), &admission).await {
                    Ok(_) => None,
                    Err(StoreError::Admission(refusal)) => Some(refusal),
                    Err(other) => panic!("admission failed: {other}"),
                });
            }
        }
    });
    let outcomes: Vec<_> = join_all(creators).await.into_iter().flatten().collect();
    let admitted = outcomes.iter().filter(|o| o.is_none()).count() as i64;
    let capacity = outcomes.iter().filter(|o| **o == Some(AdmissionRefusal::Capacity)).count();
    (admitted, capacity)
}

/// A cap just above `max_connections`: the first admissions take the application lock shared,
/// the rest exclusive, and the cap is met exactly across the switch.
#[tokio::test]
async fn an_app_cap_just_above_max_connections_is_met_exactly_across_both_lock_modes() {
    let db = Arc::new(TestDb::new().await);
    let cap = db.count("SELECT current_setting('max_connections')::bigint").await + 8;
    let budget = AdmissionBudget { global_concurrent: cap, ..ROOMY };
    let outcome =
        admit_past_a_cap(&db, cap, |i| (APP.to_owned(), admission("src", &format!("s{i}"), budget))).await;
    assert_eq!(outcome, (cap, 24), "exactly the cap admitted, the rest refused for capacity");
    assert_eq!(db.count("SELECT count(*) FROM tasks WHERE status = 'queued'").await, cap);
    assert_eq!(db.count("SELECT sum(active)::bigint FROM app_concurrency").await, cap);
    assert!(db.count("SELECT count(*) FROM app_concurrency").await > 1, "spread over shards");
}

#[tokio::test]
async fn steps_per_source_at_the_edge_freed_by_failure_and_reset_after_a_day() {
    let db = TestDb::new().await;
    let budget = AdmissionBudget { max_steps_per_source: 3, ..ROOMY };
    let mut ids = Vec::new();
    for step in ["a", "b", "c"] {
        ids.push(scoped(&db, "s1", step, &admission("doc", step, budget)).await.unwrap().created.task().id);
    }
    assert_eq!(
        refusal(&scoped(&db, "s1", "d", &admission("doc", "d", budget)).await),
        Some(AdmissionRefusal::SourceBudget)
    );
    assert!(scoped(&db, "s1", "other-doc", &admission("doc2", "d", budget)).await.is_ok(), "per source");

    // A failed task frees its logical step.
    let client = db.client().await;
    let Claim::Claimed(task) = claim_one(&client, ids[0]).await else { panic!("claim") };
    store::fail_attempt(&client, task.lease(), ErrorCode::ProviderError, "x").await.unwrap();
    assert!(scoped(&db, "s1", "d", &admission("doc", "d", budget)).await.is_ok());
    assert_eq!(
        refusal(&scoped(&db, "s1", "e", &admission("doc", "e", budget)).await),
        Some(AdmissionRefusal::SourceBudget)
    );

    db.sql("UPDATE scope_admissions SET created_at = now() - interval '25 hours'").await;
    assert!(
        scoped(&db, "s1", "e", &admission("doc", "e", budget)).await.is_ok(),
        "the budget resets after 24 h"
    );
}

#[tokio::test]
async fn sources_per_day_at_the_edge_and_reset_after_a_day() {
    let db = TestDb::new().await;
    let budget = AdmissionBudget { sources_per_24_hours: 2, ..ROOMY };
    assert!(scoped(&db, "s1", "a1", &admission("A", "1", budget)).await.is_ok());
    assert!(scoped(&db, "s1", "b1", &admission("B", "1", budget)).await.is_ok());
    assert_eq!(
        refusal(&scoped(&db, "s1", "c1", &admission("C", "1", budget)).await),
        Some(AdmissionRefusal::DailyBudget)
    );
    assert!(
        scoped(&db, "s1", "a2", &admission("A", "2", budget)).await.is_ok(),
        "a source already seen is not new"
    );
    db.sql("UPDATE scope_admissions SET created_at = now() - interval '25 hours'").await;
    assert!(scoped(&db, "s1", "c1", &admission("C", "1", budget)).await.is_ok());
}

#[tokio::test]
async fn a_cache_hit_is_a_new_succeeded_task_that_spends_no_budget() {
    let db = TestDb::new().await;
    let budget = AdmissionBudget { burst: 2, tasks_per_minute: 1, ..ROOMY };
    let first = scoped(&db, "s1", "first", &admission("doc", "summary", budget)).await.unwrap();
    let stored = store::get_task(&db.client().await, APP, first.created.task().id).await.unwrap();
    assert_eq!(stored.as_ref(), Some(first.created.task()), "an admitted task is answered as stored");
    assert_eq!(stored.and_then(|t| t.source_id).as_deref(), Some("doc"));
    complete(&db, first.created.task().id).await;
    let tokens_before = db.count("SELECT (tokens * 1000)::bigint FROM scope_budgets").await;

    let hit = scoped(&db, "s1", "second", &admission("doc", "summary", budget)).await.unwrap();
    let Created::New(task) = &hit.created else { panic!("a hit is a new task") };
    assert_ne!(task.id, first.created.task().id);
    assert_eq!((task.status, task.attempts, task.usage.clone()), (TaskStatus::Succeeded, 0, None));
    assert_eq!(task.output, Some(json!("pos")));
    assert_eq!(hit.event.as_ref().map(|e| e.payload["status"].clone()), Some(json!("succeeded")));
    assert_eq!(
        db.count("SELECT (tokens * 1000)::bigint FROM scope_budgets").await,
        tokens_before,
        "no token spent"
    );
    assert_eq!(db.count("SELECT count(*) FROM scope_admissions").await, 1, "no step spent");

    let mut recompute = admission("doc", "summary", budget);
    recompute.recompute = true;
    let again = scoped(&db, "s1", "third", &recompute).await.unwrap();
    assert_eq!(again.created.task().status, TaskStatus::Queued, "recompute skips the cache");
    assert_eq!(
        refusal(&scoped(&db, "s1", "fourth", &admission("doc", "other-revision", budget)).await),
        Some(AdmissionRefusal::RateLimited { retry_after: Duration::from_secs(60) }),
        "a different key misses the cache and needs a token"
    );
    // A cached result belongs to its scope.
    assert_eq!(
        scoped(&db, "s2", "fifth", &admission("doc", "summary", budget)).await.unwrap().created.task().status,
        TaskStatus::Queued
    );
}

#[tokio::test]
async fn an_existing_effect_key_spends_nothing_even_when_admission_would_refuse() {
    let db = TestDb::new().await;
    let budget = AdmissionBudget { burst: 1, tasks_per_minute: 1, ..ROOMY };
    let first = scoped(&db, "s1", "k", &admission("doc", "a", budget)).await.unwrap();
    let again = scoped(&db, "s1", "k", &admission("doc", "b", budget)).await.unwrap();
    assert_eq!(again.created, Created::Existing(first.created.task().clone()));
}

#[tokio::test]
async fn deleting_a_scope_keeps_its_budget_and_aborts_its_running_task() {
    let db = TestDb::new().await;
    let budget = AdmissionBudget { burst: 3, tasks_per_minute: 1, ..ROOMY };
    let running = scoped(&db, "s1", "r", &admission("doc", "r", budget)).await.unwrap().created.task().id;
    scoped(&db, "s1", "q", &admission("doc2", "q", budget)).await.unwrap();
    let kept = scoped(&db, "s2", "other", &admission("doc", "x", budget)).await.unwrap().created.task().id;
    let mut client = db.client().await;
    let Claim::Claimed(task) = claim_one(&client, running).await else { panic!("claim") };

    assert_eq!(
        store::delete_owned_page(&mut client, APP, "s1", Some("doc2"), DELETE_PAGE).await.unwrap(),
        1,
        "one source"
    );
    assert_eq!(
        store::delete_owned_page(&mut client, APP, "s1", None, DELETE_PAGE).await.unwrap(),
        1,
        "the rest of the scope"
    );
    assert_eq!(
        store::delete_owned_page(&mut client, "another-app", "s2", None, DELETE_PAGE).await.unwrap(),
        0
    );
    assert!(store::get_task(&client, APP, kept).await.unwrap().is_some());
    assert_eq!(
        store::heartbeat(&client, task.lease()).await.unwrap(),
        store::LeaseCheck::Lost,
        "the worker aborts"
    );
    assert_eq!(
        store::complete_attempt(&client, task.lease(), &json!("late"), None, false).await.unwrap(),
        store::Fenced::Lost
    );
    assert_eq!(db.count("SELECT count(*) FROM tasks WHERE scope_id = 's1'").await, 0, "never written back");
    assert_eq!(
        db.count("SELECT count(*) FROM scope_admissions WHERE scope_id = 's1'").await,
        2,
        "history kept"
    );
    assert_eq!(
        db.count("SELECT sum(active)::bigint FROM app_concurrency").await,
        1,
        "deleted active tasks left the count"
    );
    // The bucket was not reset: one token left from three, then empty.
    assert!(scoped(&db, "s1", "n1", &admission("doc", "n1", budget)).await.is_ok());
    assert!(matches!(
        refusal(&scoped(&db, "s1", "n2", &admission("doc", "n2", budget)).await),
        Some(AdmissionRefusal::RateLimited { .. })
    ));
}

#[tokio::test]
async fn a_released_task_is_deleted_only_after_both_release_and_completion_are_a_day_old() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let id = scoped(&db, "s1", "k", &admission("doc", "k", ROOMY)).await.unwrap().created.task().id;
    assert!(!store::release(&client, APP, "s2", "k").await.unwrap(), "wrong scope");
    assert!(store::release(&client, APP, "s1", "k").await.unwrap());
    let day = Duration::from_secs(86_400);
    assert_eq!(store::delete_retained(&client, day, 100).await.unwrap(), 0, "not complete yet");
    complete(&db, id).await;
    db.sql("UPDATE tasks SET released_at = now() - interval '25 hours'").await;
    assert_eq!(store::delete_retained(&client, day, 100).await.unwrap(), 0, "completed only now");
    db.sql("UPDATE tasks SET completed_at = now() - interval '25 hours', released_at = now() - interval '2 hours'").await;
    assert_eq!(store::delete_retained(&client, day, 100).await.unwrap(), 0, "released only 2 h ago");
    db.sql("UPDATE tasks SET released_at = now() - interval '25 hours'").await;
    assert_eq!(store::delete_retained(&client, day, 100).await.unwrap(), 1);
    assert_eq!(db.count("SELECT count(*) FROM tasks").await, 0);

    // Run tasks are never released.
    let run = run(&db, APP).await;
    let run_task =
        store::create_task(&client, &new_task(APP, TaskOwner::Run(run.id), "run-k")).await.unwrap();
    assert!(!store::release(&client, APP, "scope-1", &run_task.task().effect_key).await.unwrap());
}

#[tokio::test]
async fn unreleased_sources_page_through_two_hundred_fifty_sources_once_each() {
    let db = TestDb::new().await;
    db.sql(&format!(
        "INSERT INTO tasks (id, app_id, scope_id, source_id, step_key, effect_key, kind, request, input_hash, model_id, max_attempts) \
         SELECT gen_random_uuid(), '{APP}', 'scope-' || (i % 3), 'src-' || lpad(i::text, 4, '0'), \
                CASE WHEN i % 2 = 0 THEN 'even' ELSE 'odd' END, 'k' || i, 'classify', '{{}}', repeat('a', 64), 'default', 3 \
         FROM generate_series(1, 250) i; \
         INSERT INTO tasks (id, app_id, scope_id, source_id, step_key, effect_key, kind, request, input_hash, model_id, max_attempts, released_at) \
         VALUES (gen_random_uuid(), '{APP}', 'scope-0', 'released', 'even', 'r', 'classify', '{{}}', repeat('a', 64), 'default', 3, now())"
    ))
    .await;
    let client = db.client().await;
    let mut seen = Vec::new();
    let mut after = None;
    let mut pages = 0;
    loop {
        let (page, next) = store::unreleased_sources(&client, APP, None, after.as_ref()).await.unwrap();
        pages += 1;
        assert!(page.len() <= 100);
        seen.extend(page);
        match next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen.len(), 250);
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, seen, "in order, each exactly once");
    assert!(!seen.iter().any(|s| s.source_id == "released"));
    let (odd, _) = store::unreleased_sources(&client, APP, Some("odd"), None).await.unwrap();
    assert!(
        odd.len() == 100
            && odd.iter().all(|s| s.source_id.trim_start_matches("src-").parse::<u32>().unwrap() % 2 == 1)
    );
    let (other_app, next) = store::unreleased_sources(&client, "other", None, None).await.unwrap();
    assert!(other_app.is_empty() && next.is_none());
}

/// Deleting a source's data is serialized with the creates of its scope: a create that found a
/// cached output before the delete began cannot store its copy after the delete is done.
///
/// The create is held between its read and its write the way any slow transaction can be: an
/// uncommitted row elsewhere holds the effect key it inserts, so its insert waits. The delete
/// starts in that window.
#[tokio::test]
async fn a_create_that_read_the_cache_before_a_delete_cannot_leave_a_copy_after_it() {
    let db = TestDb::new().await;
    let seeded = scoped(&db, "s1", "seed", &admission("doc", "a", ROOMY)).await.unwrap();
    complete(&db, seeded.created.task().id).await;

    let mut holder = db.client().await;
    let hold = holder.transaction().await.unwrap();
    hold.execute(
        "INSERT INTO tasks (id, app_id, scope_id, source_id, step_key, effect_key, kind, request, input_hash, \
             model_id, max_attempts) \
         SELECT gen_random_uuid(), app_id, 'elsewhere', source_id, step_key, 'copy', kind, request, input_hash, \
             model_id, max_attempts FROM tasks WHERE id = $1",
        &[&seeded.created.task().id],
    )
    .await
    .unwrap();

    let create = tokio::spawn({
        let pool = db.pool.clone();
        async move {
            let mut client = pool.get().await.unwrap();
            let task = new_task(APP, app_owner("s1"), "copy");
            store::create_scoped(&mut client, &task, &admission("doc", "a", ROOMY)).await
        }
    });
    // Until the create waits on the held effect key, with the cached output read.
    db.wait_for_lock_waits("INSERT INTO tasks", 1).await;
    let delete = tokio::spawn({
        let pool = db.pool.clone();
        async move {
            let mut client = pool.get().await.unwrap();
            store::delete_owned_page(&mut client, APP, "s1", Some("doc"), DELETE_PAGE).await.unwrap()
        }
    });
    // Until the delete waits for the create's scope lock.
    db.wait_for_lock_waits("pg_advisory_xact_lock", 1).await;
    hold.rollback().await.unwrap();
    let created = create.await.unwrap().unwrap();
    assert_eq!(created.created.task().status, TaskStatus::Succeeded, "a cache hit: the copy");
    delete.await.unwrap();
    assert_eq!(
        db.count("SELECT count(*) FROM tasks WHERE scope_id = 's1' AND source_id = 'doc'").await,
        0,
        "the copy was deleted with the source it was copied from"
    );
}

async fn scoped_as(
    db: &TestDb,
    app: &str,
    scope: &str,
    effect_key: &str,
    admission: &ScopedAdmission,
) -> Result<store::ScopedCreated, StoreError> {
    let mut client = db.client().await;
    store::create_scoped(&mut client, &new_task(app, app_owner(scope), effect_key), admission).await
}

fn with_system_cap(source: &str, step: &str, cap: i64) -> ScopedAdmission {
    ScopedAdmission {
        limits: store::ServerLimits { system_cap: Some(cap), ..Default::default() },
        ..admission(source, step, ROOMY)
    }
}

/// The system-wide cap counts every application's active scoped tasks together: three
/// applications, each far under its own cap, never have more than twelve active between them.
#[tokio::test]
async fn a_system_cap_of_twelve_holds_across_three_applications_while_slots_are_reused() {
    let db = Arc::new(TestDb::new().await);
    let monitor = PeakMonitor::start(&db);
    let creators = (0..180).map(|i| {
        let db = db.clone();
        async move {
            let app = format!("app-{}", i % 3);
            let scope = format!("scope-{}", i % 11);
            let result =
                scoped_as(&db, &app, &scope, &format!("k{i}"), &with_system_cap("src", &format!("s{i}"), 12))
                    .await;
            match &result {
                Ok(created) => {
                    tokio::time::sleep(Duration::from_millis((i % 5) as u64 * 3)).await;
                    complete(&db, created.created.task().id).await;
                    true
                }
                Err(StoreError::Admission(AdmissionRefusal::Capacity)) => false,
                Err(other) => panic!("admission failed: {other}"),
            }
        }
    });
    let admitted = join_all(creators).await.into_iter().filter(|ok| *ok).count();
    let (peak, _) = monitor.stop().await;
    assert!(peak <= 12, "peak active {peak} over the system-wide cap");
    assert!(admitted > 12, "slots were reused: {admitted}");
    assert_eq!(db.count("SELECT sum(active)::bigint FROM system_concurrency").await, 0, "back to zero");
}

/// A system cap just above `max_connections`, four applications: shared lock first, exclusive
/// near the cap, exactly the cap admitted; the counters agree with the tasks.
#[tokio::test]
async fn a_system_cap_just_above_max_connections_is_met_exactly_across_both_lock_modes() {
    let db = Arc::new(TestDb::new().await);
    let cap = db.count("SELECT current_setting('max_connections')::bigint").await + 8;
    let outcome = admit_past_a_cap(&db, cap, |i| {
        (format!("app-{}", i % 4), with_system_cap("src", &format!("s{i}"), cap))
    })
    .await;
    assert_eq!(outcome, (cap, 24), "exactly the cap admitted, the rest refused for capacity");
    assert_eq!(db.count("SELECT count(*) FROM tasks WHERE status = 'queued'").await, cap);
    assert_eq!(db.count("SELECT sum(active)::bigint FROM system_concurrency").await, cap);
    assert_eq!(db.count("SELECT sum(active)::bigint FROM app_concurrency").await, cap);
}
