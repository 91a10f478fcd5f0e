//! Acting on many tasks: `replay`, `cancel`/`replay` by filter as operations (`--wait` and
//! `operations list|get|wait|stop`), `hold`, `holds` and `release-hold`, against the dev server;
//! and the library's reads the command line does not make (a task's replays, one hold).

use std::time::Duration;

use aitasks_client::{Client, OperationState};
use aitasks_testkit::{dev_token, wait_until, Reply, Stack};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::{aitasks, aitasks_started, classify_body, scratch};

const APP: &str = "app-cli-acting";

/// Create a scope's classify task from a file, its id.
async fn create(stack: &Stack, token: &str, scope: &str, key: &str) -> String {
    let path = scratch("acting").join("body.json");
    std::fs::write(&path, classify_body(scope, key).to_string()).unwrap();
    let made =
        aitasks(stack, token, &["create", "--file", path.to_str().unwrap(), "--json"]).await.ok().json();
    made["task"]["id"].as_str().unwrap().to_owned()
}

fn ids(listing: &Value, key: &str) -> Vec<String> {
    listing[key].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn a_replay_makes_one_new_task_and_leaves_the_original_as_it_was() {
    let stack = Stack::start().await;
    let token = dev_token(APP);
    let original = create(&stack, &token, "inbox", "mail-1").await;
    let ended = aitasks(&stack, &token, &["wait", &original, "--timeout", "60", "--json"]).await.ok().json();
    assert_eq!(ended["status"], "succeeded");

    let first = aitasks(&stack, &token, &["replay", &original, "--recompute", "--json"]).await.ok().json();
    assert_eq!(first["outcome"], "created");
    assert_eq!(
        (&first["task"]["replayOf"], &first["task"]["effectKey"]),
        (&json!(original), &json!(format!("replay:{original}")))
    );
    assert_eq!(first["task"]["request"], ended["request"]);
    let again = aitasks(&stack, &token, &["replay", &original]).await.ok();
    let replay_id = first["task"]["id"].as_str().unwrap();
    assert!(again.stdout.starts_with(&format!("existing {replay_id}")), "{}", again.stdout);
    let keyed = aitasks(&stack, &token, &["replay", &original, "--effect-key", "mail-1/again", "--json"])
        .await
        .ok()
        .json();
    assert_eq!(
        (keyed["outcome"].as_str(), keyed["task"]["effectKey"].as_str()),
        (Some("created"), Some("mail-1/again"))
    );

    let replayed = aitasks(&stack, &token, &["wait", replay_id, "--timeout", "60"]).await.ok();
    assert!(replayed.stdout.contains(&format!("replay of:   {original}")), "{}", replayed.stdout);
    let after = aitasks(&stack, &token, &["get", &original, "--json"]).await.ok().json();
    assert_eq!(after, ended, "the original is untouched");

    let client = Client::new(format!("http://{}", stack.server.address), token.clone()).unwrap();
    let replays = client.replays(original.parse().unwrap()).await.unwrap();
    let listed: Vec<String> = replays.replays.iter().map(|r| r.id.to_string()).collect();
    assert_eq!(listed, [replay_id, keyed["task"]["id"].as_str().unwrap()], "oldest first");
    assert_eq!((replays.more, replays.replays[0].operation_id), (false, None));

    // Refusals: another tenant's task, a task not ended yet.
    let other = aitasks(&stack, &dev_token("app-cli-acting-other"), &["replay", &original, "--json"]).await;
    assert_eq!((other.code, other.json()["error"]["code"].as_str()), (1, Some("NOT_FOUND")));
    stack.stub.script([Reply::slow(Duration::from_secs(30))]);
    let open = create(&stack, &token, "inbox", "mail-2").await;
    let refused = aitasks(&stack, &token, &["replay", &open, "--json"]).await;
    assert_eq!((refused.code, refused.json()["error"]["code"].as_str()), (1, Some("TASK_NOT_ENDED")));
    aitasks(&stack, &token, &["cancel", &open]).await.ok();
}

#[tokio::test]
async fn cancel_then_replay_by_filter_followed_to_the_end_with_exact_counts() {
    let stack = Stack::start().await;
    let token = dev_token(APP);
    // Every provider call is slow: the scope's tasks stay open until canceled.
    stack.stub.set_default(Reply::slow(Duration::from_secs(30)));
    let mut created = Vec::new();
    for i in 0..6 {
        created.push(create(&stack, &token, "bulk", &format!("bulk-{i}")).await);
    }
    let other = create(&stack, &token, "elsewhere", "other-1").await;

    let cancel =
        aitasks(&stack, &token, &["cancel", "--scope", "bulk", "--wait", "--timeout", "120", "--json"])
            .await
            .ok();
    let lines = cancel.json_lines();
    assert_eq!(lines[0]["outcome"], "created", "{}", cancel.stdout);
    let ended = &lines.last().unwrap()["operation"];
    assert_eq!(ended["state"], "done", "{}", cancel.stdout);
    assert_eq!(
        (&ended["action"], &ended["matched"], &ended["done"]),
        (&json!("cancel"), &json!(6), &json!(6))
    );
    assert_eq!((&ended["skipped"], &ended["failed"]), (&json!(0), &json!(0)));
    let progress: Vec<u64> = lines.iter().map(|l| l["operation"]["done"].as_u64().unwrap()).collect();
    assert!(progress.windows(2).all(|w| w[0] <= w[1]), "a line per change, counts only grow: {progress:?}");
    let cancel_id = ended["id"].as_str().unwrap().to_owned();
    let api = stack.api(APP);
    for id in &created {
        api.wait_for(id, |t| t["status"] == "canceled").await;
    }
    let untouched = aitasks(&stack, &token, &["get", &other, "--json"]).await.ok().json();
    assert!(["queued", "running"].contains(&untouched["status"].as_str().unwrap()), "{untouched}");

    // The same operation asked again with its key: the same operation, nothing new.
    let keyed = ["cancel", "--scope", "elsewhere", "--idempotency-key", "cli-acting-1", "--json"];
    let first = aitasks(&stack, &token, &keyed).await.ok().json();
    let second = aitasks(&stack, &token, &keyed).await.ok().json();
    assert_eq!((first["outcome"].as_str(), second["outcome"].as_str()), (Some("created"), Some("existing")));
    assert_eq!(first["operation"]["id"], second["operation"]["id"]);
    api.wait_for(&other, |t| t["status"] == "canceled").await;

    // Replay the canceled tasks of the scope (the default statuses: failed, canceled).
    stack.stub.set_default(Reply::Auto);
    let replay =
        aitasks(&stack, &token, &["replay", "--scope", "bulk", "--wait", "--timeout", "120"]).await.ok();
    let last = replay.stdout.lines().last().unwrap();
    assert!(
        last.contains("done") && last.contains("matched 6  done 6  skipped 0  failed 0"),
        "{}",
        replay.stdout
    );
    let listed = aitasks(&stack, &token, &["list", "--scope", "bulk", "--json"]).await.ok().json();
    let replays: Vec<&Value> =
        listed["tasks"].as_array().unwrap().iter().filter(|t| t["replayOf"].is_string()).collect();
    assert_eq!(replays.len(), 6, "one replay of each canceled task");
    let mut originals: Vec<&str> = replays.iter().map(|t| t["replayOf"].as_str().unwrap()).collect();
    originals.sort_unstable();
    let mut expected: Vec<&str> = created.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(originals, expected);
    // Again: each task's derived key names its replay, made by the first operation.
    let again =
        aitasks(&stack, &token, &["replay", "--scope", "bulk", "--status", "canceled", "--wait", "--json"])
            .await
            .ok();
    let again = again.json_lines().pop().unwrap()["operation"].take();
    assert_eq!(
        (&again["matched"], &again["done"], &again["skipped"]),
        (&json!(6), &json!(0), &json!(6)),
        "{again}"
    );

    // operations list, get, wait and stop of an ended one (as it is).
    let all = aitasks(&stack, &token, &["operations", "list", "--json"]).await.ok().json();
    assert_eq!(all["count"], 4, "{all}");
    assert_eq!(ids(&all, "operations")[0], cancel_id, "in creation order");
    let done = aitasks(&stack, &token, &["operations", "list", "--state", "done", "--limit", "1", "--json"])
        .await
        .ok()
        .json();
    assert_eq!((done["count"].as_u64(), &done["next"]), (Some(1), &json!(cancel_id)));
    let got = aitasks(&stack, &token, &["operations", "get", &cancel_id]).await.ok();
    assert!(
        got.stdout.contains("state:       done") && got.stdout.contains("matched 6  done 6"),
        "{}",
        got.stdout
    );
    let waited = aitasks(&stack, &token, &["operations", "wait", &cancel_id]).await.ok();
    assert_eq!(waited.stdout.lines().count(), 1, "an ended operation: one line\n{}", waited.stdout);
    let stopped = aitasks(&stack, &token, &["operations", "stop", &cancel_id, "--json"]).await.ok().json();
    assert_eq!(stopped["state"], "done", "an ended operation is answered as it is");
    let client = Client::new(format!("http://{}", stack.server.address), token.clone()).unwrap();
    assert_eq!(client.get_operation(cancel_id.parse().unwrap()).await.unwrap().state, OperationState::Done);

    let missing =
        aitasks(&stack, &dev_token("app-cli-acting-other"), &["operations", "get", &cancel_id]).await;
    assert_eq!(missing.code, 1);
    assert!(missing.stderr.contains("NOT_FOUND"), "{}", missing.stderr);
}

#[tokio::test]
async fn a_running_operation_is_stopped_and_its_follower_exits_1() {
    // No workers, one page of two tasks per request, and no sweep while the test runs (the
    // dev server's first sweep comes a stale-running period after its start): an operation over
    // eight tasks stays running after its request's page until it is stopped.
    let stack = Stack::start_with(&[
        ("AITASK_LOCAL_POLLERS", "0"),
        ("AITASK_REQUEST_PAGE", "2"),
        ("AITASK_REQUEST_WORK_MS", "0"),
        ("AITASK_SWEEP_INTERVAL_MS", "600000"),
        ("AITASK_STALE_RUNNING_MS", "600000"),
    ])
    .await;
    let token = dev_token(APP);
    for i in 0..8 {
        create(&stack, &token, "stoppable", &format!("s-{i}")).await;
    }
    // The follower: `cancel --wait`; its first line is the request's answer, running.
    let args = ["cancel", "--scope", "stoppable", "--wait", "--timeout", "60", "--json"];
    let mut follower = aitasks_started(&stack, &token, &args);
    let mut lines = BufReader::new(follower.stdout.take().unwrap()).lines();
    let first: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(
        (first["outcome"].as_str(), first["operation"]["state"].as_str()),
        (Some("created"), Some("running")),
        "{first}"
    );
    assert_eq!((&first["operation"]["matched"], &first["operation"]["done"]), (&json!(2), &json!(2)));
    let id = first["operation"]["id"].as_str().unwrap().to_owned();

    let stopped = aitasks(&stack, &token, &["operations", "stop", &id, "--json"]).await.ok().json();
    assert_eq!(
        (stopped["state"].as_str(), stopped["endedAt"].is_string()),
        (Some("stopped"), true),
        "{stopped}"
    );
    assert_eq!(
        [&stopped["matched"], &stopped["done"], &stopped["skipped"], &stopped["failed"]],
        [&json!(2), &json!(2), &json!(0), &json!(0)],
        "the request's one page, nothing after the stop: {stopped}"
    );
    let mut rest = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        rest.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    let ended = follower.wait_with_output().await.unwrap();
    let stderr = String::from_utf8_lossy(&ended.stderr);
    assert_eq!(ended.status.code(), Some(1), "a followed operation that ended stopped: {rest:?}\n{stderr}");
    assert_eq!(
        rest.last().map(|l| &l["operation"]),
        Some(&stopped),
        "its last line is the stopped operation"
    );
    let listed = aitasks(&stack, &token, &["list", "--scope", "stoppable", "--json"]).await.ok().json();
    let mut statuses: Vec<&str> =
        listed["tasks"].as_array().unwrap().iter().map(|t| t["status"].as_str().unwrap()).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [["canceled"; 2].as_slice(), &["queued"; 6]].concat(), "{listed}");

    let again = aitasks(&stack, &token, &["operations", "wait", &id]).await;
    assert_eq!(again.code, 1, "{}", again.stdout);
    assert!(again.stdout.contains("stopped"), "{}", again.stdout);
    let ended =
        aitasks(&stack, &token, &["operations", "list", "--state", "stopped", "--json"]).await.ok().json();
    assert_eq!(ids(&ended, "operations"), [id.as_str()]);
}

#[tokio::test]
async fn a_held_scope_keeps_its_tasks_queued_until_released() {
    let stack = Stack::start().await;
    let token = dev_token(APP);
    let held = aitasks(&stack, &token, &["hold", "--scope", "paused", "--reason", "maintenance", "--json"])
        .await
        .ok()
        .json();
    assert_eq!((held["outcome"].as_str(), held["hold"]["kind"].as_str()), (Some("created"), Some("manual")));
    assert_eq!(
        (&held["hold"]["target"], &held["hold"]["reason"]),
        (&json!({"scopeId": "paused"}), &json!("maintenance"))
    );
    let hold_id = held["hold"]["id"].as_str().unwrap().to_owned();
    let again = aitasks(&stack, &token, &["hold", "--scope", "paused"]).await.ok();
    assert!(again.stdout.starts_with(&format!("existing {hold_id}")), "{}", again.stdout);

    let waiting = create(&stack, &token, "paused", "p-1").await;
    let free = create(&stack, &token, "free", "f-1").await;
    aitasks(&stack, &token, &["wait", &free, "--timeout", "60"]).await.ok();
    // A worker has claimed the held task and parked it; the sweeper has had its chances since.
    let parked = format!(
        "SELECT count(*) FROM tasks WHERE id = '{waiting}' AND status = 'queued' \
         AND message_sent_at = 'infinity'"
    );
    wait_until("the held task to be parked", || async { stack.db.count(&parked).await == 1 }).await;
    stack.server.wait_for_sweeps(2).await;
    // A task of another scope ran to its end; the held one is queued and spent nothing.
    let still = aitasks(&stack, &token, &["get", &waiting, "--json"]).await.ok().json();
    assert_eq!((still["status"].as_str(), still["attempts"].as_u64()), (Some("queued"), Some(0)), "{still}");
    let history = aitasks(&stack, &token, &["history", &waiting, "--json"]).await.ok().json();
    assert_eq!(history["attempts"]["attempts"], json!([]), "no attempt recorded while held: {history}");
    assert_eq!(stack.stub.calls(), 1, "the provider was called for the free task only");

    let active = aitasks(&stack, &token, &["holds", "--json"]).await.ok().json();
    assert_eq!(ids(&active, "holds"), [hold_id.as_str()]);
    let text = aitasks(&stack, &token, &["holds"]).await.ok();
    assert!(text.stdout.contains("scope paused") && text.stdout.contains("(maintenance)"), "{}", text.stdout);

    let released = aitasks(&stack, &token, &["release-hold", &hold_id, "--json"]).await.ok().json();
    assert_eq!((released["releasedBy"].as_str(), released["releasedAt"].is_string()), (Some("person"), true));
    let ended = aitasks(&stack, &token, &["wait", &waiting, "--timeout", "60", "--json"]).await.ok().json();
    assert_eq!(
        (ended["status"].as_str(), ended["attempts"].as_u64()),
        (Some("succeeded"), Some(1)),
        "released, it ran once: {ended}"
    );
    assert_eq!(stack.stub.calls(), 2);
    let gone = aitasks(&stack, &token, &["holds", "--json"]).await.ok().json();
    assert_eq!(gone["count"], 0);
    let past = aitasks(&stack, &token, &["holds", "--released", "--json"]).await.ok().json();
    assert_eq!(ids(&past, "holds"), [hold_id.as_str()]);
    let client = Client::new(format!("http://{}", stack.server.address), token.clone()).unwrap();
    let read = client.get_hold(hold_id.parse().unwrap()).await.unwrap();
    assert!(!read.is_active());

    let unknown = aitasks(&stack, &token, &["hold", "--profile", "no-such-profile", "--json"]).await;
    assert_eq!((unknown.code, unknown.json()["error"]["code"].as_str()), (1, Some("AI_MODEL_UNKNOWN")));
}

#[tokio::test]
async fn filter_flags_are_checked_before_anything_is_sent() {
    let stack = Stack::start().await;
    let token = dev_token(APP);
    for args in [
        vec!["cancel", "--scope", "s", "--status", "done"],
        vec!["replay", "--all", "--kind", "summarize"],
        vec!["cancel", "--all", "--created-after", "yesterday"],
        vec!["replay", "--status", "failed"],
        vec!["operations", "list", "--state", "paused"],
        vec!["hold"],
    ] {
        let bad = aitasks(&stack, &token, &args).await;
        assert_eq!(bad.code, 2, "{args:?}: {}", bad.stderr);
    }
    let none = aitasks(&stack, &token, &["operations", "list", "--json"]).await.ok().json();
    assert_eq!(none["count"], 0, "nothing was created");
}
