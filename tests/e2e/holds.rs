//! Holds over HTTP (docs/api.md, "Holds"): a tenant holds a profile or a scope, its tasks stay
//! queued without spending an attempt or expiring, and a release runs them; the system holds a
//! profile whose provider keeps failing and releases it once a probe gets an answer.

use std::future::ready;
use std::time::{Duration, Instant};

use aitasks_testkit::*;
use serde_json::{json, Value};

const APP: &str = "app-holds";

fn task(scope: &str, effect_key: &str, model_id: &str) -> Value {
    json!({"owner": {"scopeId": scope}, "stepKey": "label", "effectKey": effect_key, "modelId": model_id,
           "request": {"kind": "classify", "prompt": "Spam?", "input": {"text": effect_key},
                       "choices": ["spam", "ham"]}})
}

async fn create(api: &Api, body: &Value) -> String {
    let (status, created) = api.post("/v1/tasks", body).await;
    assert_eq!(status, 201, "{created}");
    created["id"].as_str().unwrap().to_owned()
}

async fn parked(stack: &Stack) -> i64 {
    stack
        .db
        .count("SELECT count(*) FROM tasks WHERE status = 'queued' AND message_sent_at = 'infinity'")
        .await
}

/// Each task is queued, has spent no attempt and has no attempt record.
async fn assert_untouched(api: &Api, ids: &[String]) {
    for id in ids {
        let (_, task) = api.get(&format!("/v1/tasks/{id}")).await;
        assert_eq!((task["status"].as_str(), task["attempts"].as_i64()), (Some("queued"), Some(0)), "{task}");
        let (status, attempts) = api.get(&format!("/v1/tasks/{id}/attempts")).await;
        assert_eq!((status, &attempts["attempts"]), (200, &json!([])), "{attempts}");
    }
}

/// A tenant's hold of a profile: its tasks are parked (queued, no attempt, no call) and do not
/// expire past the queue timeout while held; the release runs every one once.
#[tokio::test]
async fn a_held_profile_spends_no_attempt_and_does_not_expire_until_released() {
    let stack = Stack::start_with(&[("AITASK_QUEUE_TIMEOUT_MS", "2000")]).await;
    let api = stack.api(APP);
    let (status, hold) =
        api.post("/v1/holds", &json!({"profile": "default", "reason": "provider incident"})).await;
    assert_eq!(status, 201, "{hold}");
    assert_eq!(
        (hold["kind"].as_str(), &hold["target"], hold["reason"].as_str(), &hold["releasedBy"]),
        (Some("manual"), &json!({"profile": "default"}), Some("provider incident"), &Value::Null)
    );
    let hold_id = hold["id"].as_str().unwrap().to_owned();
    let (status, again) = api.post("/v1/holds", &json!({"profile": "default"})).await;
    assert_eq!((status, &again["id"]), (200, &hold["id"]), "the active hold of the same target");

    let mut ids = Vec::new();
    for n in 0..5 {
        ids.push(create(&api, &task("s1", &format!("held-{n}"), "default")).await);
    }
    wait_until("the five tasks to be parked", || async { parked(&stack).await == 5 }).await;
    // Past the queue timeout, and the sweeper has had its chances.
    wait_until("the queue timeout to pass", || async {
        stack.db.count("SELECT count(*) FROM tasks WHERE created_at < now() - interval '4 seconds'").await
            == 5
    })
    .await;
    stack.server.wait_for_sweeps(3).await;
    assert_untouched(&api, &ids).await;
    assert_eq!(stack.stub.calls(), 0, "no provider call while held");

    let (status, released) = api.post(&format!("/v1/holds/{hold_id}/release"), &json!({})).await;
    assert_eq!((status, released["releasedBy"].as_str()), (200, Some("person")), "{released}");
    assert!(released["releasedAt"].is_string());
    for id in &ids {
        let done = api.wait_terminal(id).await;
        assert_eq!(
            (done["status"].as_str(), done["attempts"].as_i64()),
            (Some("succeeded"), Some(1)),
            "{done}"
        );
    }
    assert_eq!(stack.stub.calls(), 5);
    let (status, as_is) = api.post(&format!("/v1/holds/{hold_id}/release"), &json!({})).await;
    assert_eq!(
        (status, &as_is["releasedAt"]),
        (200, &released["releasedAt"]),
        "a released hold answers as it is"
    );

    let (_, listed) = api.get("/v1/holds").await;
    assert_eq!(listed["holds"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed["holds"][0]["id"], hold["id"]);
    assert_eq!(api.get("/v1/holds?state=active").await.1["holds"], json!([]));
    assert_eq!(api.get("/v1/holds?state=released").await.1["holds"][0]["id"], hold["id"]);
    assert_eq!(api.get(&format!("/v1/holds/{hold_id}")).await.1["releasedBy"], "person");
}

/// A scope's hold parks that scope's tasks only; its release runs them.
#[tokio::test]
async fn a_held_scope_parks_its_tasks_and_no_other() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    let (status, hold) = api.post("/v1/holds", &json!({"scopeId": "paused"})).await;
    assert_eq!((status, &hold["target"]), (201, &json!({"scopeId": "paused"})), "{hold}");
    let mut held = Vec::new();
    for n in 0..3 {
        held.push(create(&api, &task("paused", &format!("p-{n}"), "default")).await);
    }
    let free = create(&api, &task("running", "r-0", "default")).await;
    assert_eq!(api.wait_terminal(&free).await["status"], "succeeded");
    wait_until("the scope's tasks to be parked", || async { parked(&stack).await == 3 }).await;
    stack.server.wait_for_sweeps(2).await;
    assert_untouched(&api, &held).await;

    let (status, _) =
        api.post(&format!("/v1/holds/{}/release", hold["id"].as_str().unwrap()), &json!({})).await;
    assert_eq!(status, 200);
    for id in &held {
        assert_eq!(api.wait_terminal(id).await["status"], "succeeded");
    }
}

/// A held profile is passed over like one at its limit: its task's fallback answers.
#[tokio::test]
async fn a_held_profile_with_a_free_fallback_runs_the_fallback() {
    let models = json!({"default": {"model": "stub-model", "fallbacks": ["backup"]},
                        "backup": {"model": "stub-backup"}})
    .to_string();
    let stack = Stack::start_with(&[("AITASK_MODELS", &models)]).await;
    let api = stack.api(APP);
    assert_eq!(api.post("/v1/holds", &json!({"profile": "default"})).await.0, 201);
    let id = create(&api, &task("s1", "fallback", "default")).await;
    let done = api.wait_terminal(&id).await;
    assert_eq!((done["status"].as_str(), done["attempts"].as_i64()), (Some("succeeded"), Some(1)), "{done}");
    assert_eq!(done["usage"]["profile"], "backup", "{done}");
    let models: Vec<Value> = stack.stub.requests().iter().map(|request| request["model"].clone()).collect();
    assert_eq!(models, vec![json!("stub-backup")], "the held profile was never called");
}

/// What a tenant may not do: hold an unknown profile, see or release another tenant's hold,
/// release the system's automatic hold; and a body with both targets, or over the limit.
#[tokio::test]
async fn holds_are_refused_what_is_not_the_tenants() {
    let stack = Stack::start_with(&[
        ("AITASK_HOLD_AFTER_FAILURES", "1"),
        ("AITASK_HOLD_PROBE_MS", "600000"),
        ("AITASK_HOLDS_PER_TENANT", "2"),
    ])
    .await;
    let (api, other) = (stack.api(APP), stack.api("app-other"));
    let (status, unknown) = api.post("/v1/holds", &json!({"profile": "nope"})).await;
    assert_eq!((status, unknown["error"]["code"].as_str()), (400, Some("AI_MODEL_UNKNOWN")), "{unknown}");
    let (status, both) = api.post("/v1/holds", &json!({"profile": "default", "scopeId": "s"})).await;
    assert_eq!((status, both["error"]["code"].as_str()), (400, Some("INVALID_REQUEST")), "{both}");
    let (_, mine) = api.post("/v1/holds", &json!({"scopeId": "mine"})).await;
    let mine = mine["id"].as_str().unwrap().to_owned();
    for (status, answer) in [
        other.get(&format!("/v1/holds/{mine}")).await,
        other.post(&format!("/v1/holds/{mine}/release"), &json!({})).await,
        api.get("/v1/holds/not-a-uuid").await,
    ] {
        assert_eq!((status, answer["error"]["code"].as_str()), (404, Some("NOT_FOUND")), "{answer}");
    }
    assert_eq!(other.get("/v1/holds").await.1["holds"], json!([]), "another tenant's hold is not listed");
    assert_eq!(api.post("/v1/holds", &json!({"scopeId": "second"})).await.0, 201);
    let (status, limit) = api.post("/v1/holds", &json!({"scopeId": "third"})).await;
    assert_eq!((status, limit["error"]["code"].as_str()), (429, Some("WORKFLOW_AI_HOLDS_LIMIT")), "{limit}");

    // The provider fails: one failure holds the profile for every tenant (AITASK_HOLD_AFTER_FAILURES).
    stack.stub.set_default(Reply::status(503));
    let id = create(&other, &task("s1", "outage", "default")).await;
    let automatic = wait_for("the automatic hold", || async {
        let (_, listed) = api.get("/v1/holds?state=active").await;
        listed["holds"].as_array().unwrap().iter().find(|hold| hold["kind"] == "automatic").cloned()
    })
    .await;
    assert_eq!(automatic["target"], json!({"profile": "default"}));
    let (status, refused) =
        api.post(&format!("/v1/holds/{}/release", automatic["id"].as_str().unwrap()), &json!({})).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (409, Some("HOLD_IS_AUTOMATIC")), "{refused}");
    wait_until("the failing task to be parked", || async { parked(&stack).await == 1 }).await;
    let (_, parked_task) = other.get(&format!("/v1/tasks/{id}")).await;
    assert_eq!(
        (parked_task["status"].as_str(), parked_task["attempts"].as_i64()),
        (Some("queued"), Some(0)),
        "the failure that held the profile is not counted: {parked_task}"
    );
}

/// The outage of the issue: the provider answers 503 for `outage`, with `tasks` queued tasks on
/// three-attempt budgets. Every task succeeds once it is back, none fails, the profile is held
/// and released automatically, and the provider calls made during the outage are few (printed).
/// `make bench` runs it for 10 minutes and 1,000 tasks.
pub(crate) async fn outage_scenario(outage: Duration, tasks: usize) {
    let stack = Stack::start_with(&[
        ("AITASK_HOLD_PROBE_MS", "1000"),
        ("AITASK_MAX_ATTEMPTS", "3"),
        ("AITASK_DB_POOL_SIZE", "16"),
    ])
    .await;
    let api = stack.api(APP);
    stack.stub.set_default(Reply::status(503));
    let started = Instant::now();
    for chunk in (0..tasks).collect::<Vec<_>>().chunks(1_000) {
        let items: Vec<Value> = chunk.iter().map(|n| task("outage", &format!("o-{n}"), "default")).collect();
        let (status, answer) = api.post("/v1/tasks/batch", &json!({"tasks": items})).await;
        assert_eq!(status, 200, "{answer}");
    }
    let held = wait_for("the automatic hold", || async {
        let (_, listed) = api.get("/v1/holds").await;
        listed["holds"].as_array().unwrap().iter().find(|hold| hold["kind"] == "automatic").cloned()
    })
    .await;
    println!("held after {:?} and {} provider calls", started.elapsed(), stack.stub.calls());
    // The sweeper's gauge, which ProfileHeldAlarm watches, says a profile is held.
    let profiles_held = |held: u64| {
        let server = &stack.server;
        move || {
            let lines = server.json_lines();
            ready(lines.iter().rev().find_map(|line| line["sweep"]["profilesHeld"].as_u64()) == Some(held))
        }
    };
    wait_until("a sweep to say one profile is held", profiles_held(1)).await;
    // The outage lasts its length (in waits within the testkit's patience).
    while started.elapsed() < outage {
        let until = (started.elapsed() + Duration::from_secs(60)).min(outage);
        wait_until("the outage to last", || ready(started.elapsed() >= until)).await;
    }
    let calls_during_outage = stack.stub.calls();
    stack.stub.set_default(Reply::Auto);
    let back = Instant::now();
    let count = |status: &'static str| {
        let db = &stack.db;
        async move { db.count(&format!("SELECT count(*) FROM tasks WHERE status = '{status}'")).await }
    };
    // Every task ended; near the end of the patience, what is left is printed for the failure.
    wait_until("every task to end", || async {
        let ended = count("succeeded").await + count("failed").await == tasks as i64;
        if !ended && back.elapsed() > PATIENCE - Duration::from_secs(5) {
            let left = stack.db.client().await;
            let text = "\
                SELECT string_agg(line, ' | ') FROM (
                    SELECT format('%s a%s parked=%s listed=%s n=%s', status, attempts,
                                  message_sent_at = 'infinity',
                                  (SELECT count(*) FROM held_tasks WHERE task_id = tasks.id),
                                  count(*) OVER ()) AS line
                    FROM tasks WHERE status NOT IN ('succeeded', 'failed') LIMIT 5) l
                UNION ALL
                SELECT string_agg(format('%s released=%s by=%s probe=%s until=%s resent=%s', id,
                                         released_at, released_by, probe_task, probe_until, resent), ' | ')
                FROM holds
                UNION ALL
                SELECT string_agg(format('%s %s %s', pid, state, left(query, 80)), ' | ')
                FROM pg_stat_activity WHERE wait_event_type = 'Lock'";
            for row in left.query(text, &[]).await.unwrap() {
                println!("left: {:?}", row.get::<_, Option<String>>(0));
            }
            println!("{}", stack.server.logs().lines().rev().take(60).collect::<Vec<_>>().join("\n"));
        }
        ended
    })
    .await;
    let all_done = back.elapsed();
    println!(
        "outage of {outage:?} with {tasks} tasks: {calls_during_outage} provider calls during it; \
         all ended {all_done:?} after the provider came back"
    );
    assert_eq!(count("failed").await, 0, "no task failed");
    assert_eq!(count("succeeded").await, tasks as i64);
    let (_, hold) = api.get(&format!("/v1/holds/{}", held["id"].as_str().unwrap())).await;
    assert_eq!(
        (hold["kind"].as_str(), hold["releasedBy"].as_str()),
        (Some("automatic"), Some("probe")),
        "{hold}"
    );
    wait_until("a sweep to say no profile is held", profiles_held(0)).await;
    assert!(
        calls_during_outage < tasks / 2,
        "{calls_during_outage} calls during the outage for {tasks} tasks: the hold should have stopped them"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_outage_fails_no_task_and_the_probe_releases_the_hold() {
    outage_scenario(Duration::from_secs(8), 200).await;
}

/// The active automatic hold of a profile, as a tenant lists it.
async fn automatic_hold(api: &Api) -> Option<Value> {
    let (_, listed) = api.get("/v1/holds").await;
    listed["holds"].as_array().unwrap().iter().find(|hold| hold["kind"] == "automatic").cloned()
}

/// An automatic hold ends once its provider answers again (docs/api.md, "Holds": "one probe runs
/// at a time ... the first probe the provider answers releases the hold"), also when every task
/// of the profile has a free fallback: none of them is parked, so there must be a probe all the
/// same, or the profile is passed over for good and its tasks run on the fallback forever.
#[tokio::test]
async fn an_automatic_hold_of_a_profile_with_a_fallback_is_released_once_its_provider_answers() {
    let models = json!({"default": {"model": "stub-model", "fallbacks": ["backup"]},
                        "backup": {"model": "stub-backup"}})
    .to_string();
    let stack = Stack::start_with(&[
        ("AITASK_MODELS", &models),
        ("AITASK_HOLD_AFTER_FAILURES", "1"),
        ("AITASK_HOLD_PROBE_MS", "200"),
    ])
    .await;
    let api = stack.api(APP);
    // One provider-side failure at `default` holds it; the fallback answers that task.
    stack.stub.script([Reply::status(503)]);
    let first = create(&api, &task("s1", "fb-0", "default")).await;
    let done = api.wait_terminal(&first).await;
    assert_eq!((done["status"].as_str(), &done["usage"]["profile"]), (Some("succeeded"), &json!("backup")));
    let held = automatic_hold(&api).await.expect("the automatic hold of default");
    assert_eq!(held["target"], json!({"profile": "default"}));
    // The provider answers again; work goes on (on the fallback while default is held).
    for n in 1..=10 {
        let id = create(&api, &task("s1", &format!("fb-{n}"), "default")).await;
        assert_eq!(api.wait_terminal(&id).await["status"], "succeeded");
    }
    let hold_path = format!("/v1/holds/{}", held["id"].as_str().unwrap());
    wait_until("a probe to release the automatic hold", || async {
        api.get(&hold_path).await.1["releasedBy"] == "probe"
    })
    .await;
}

/// One tenant's hold affects its own tasks only (docs/api.md, "Holds": "A manual hold of the same
/// profile wins over the probe: while the tenant holds it, its tasks do not probe"). When the
/// parked task holding the automatic hold's probe lease is of a tenant that then holds the profile
/// by hand, another tenant's parked task must still be sent once the provider answers.
#[tokio::test]
async fn a_tenants_manual_hold_does_not_keep_the_automatic_hold_for_another_tenant() {
    let stack =
        Stack::start_with(&[("AITASK_HOLD_AFTER_FAILURES", "1"), ("AITASK_HOLD_PROBE_MS", "1000")]).await;
    let (first, second) = (stack.api("app-holds-first"), stack.api("app-holds-second"));
    stack.stub.set_default(Reply::status(503));
    // The first tenant's task trips the automatic hold and is parked: it is the probe.
    create(&first, &task("s1", "first-0", "default")).await;
    wait_until("the first tenant's task parked", || async { parked(&stack).await == 1 }).await;
    let held = automatic_hold(&first).await.expect("the automatic hold");
    let theirs = create(&second, &task("s1", "second-0", "default")).await;
    // The first tenant's task is the probe, sent again every second: count the second's alone.
    wait_until("the second tenant's task parked", || async {
        let sql = "SELECT count(*) FROM tasks WHERE app_id = 'app-holds-second' AND status = 'queued' \
                   AND message_sent_at = 'infinity'";
        stack.db.count(sql).await == 1
    })
    .await;
    // The first tenant holds the profile by hand; then the provider answers again.
    let (status, manual) = first.post("/v1/holds", &json!({"profile": "default"})).await;
    assert_eq!(status, 201, "{manual}");
    stack.stub.set_default(Reply::Auto);
    let done = second.wait_terminal(&theirs).await;
    assert_eq!((done["status"].as_str(), done["attempts"].as_i64()), (Some("succeeded"), Some(1)), "{done}");
    let (_, hold) = second.get(&format!("/v1/holds/{}", held["id"].as_str().unwrap())).await;
    assert_eq!(hold["releasedBy"], "probe", "{hold}");
}
