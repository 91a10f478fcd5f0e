//! What `runs get`, `tail --run` and `batch` draw on a terminal (a pseudo-terminal, read as a screen): the
//! run's bar with its counts by status (below the changes, for `tail`), batch's sent and refused
//! figures; and the plain lines, byte for byte, off a terminal, with `NO_COLOR` or `TERM=dumb`.

use std::time::Duration;

use aitasks_client::{Client, TaskBody};
use aitasks_testkit::{dev_token, Reply, Stack};
use serde_json::{json, Value};
use uuid::Uuid;

use crate::terminal::Terminal;
use crate::{aitasks, aitasks_with, classify_body, scratch};

const APP: &str = "app-cli-terminal";
const WITHIN: Duration = Duration::from_secs(60);

fn in_run(run: Uuid, effect_key: &str) -> TaskBody {
    let mut body = classify_body("ignored", effect_key);
    let object = body.as_object_mut().unwrap();
    object.remove("owner");
    object.insert("runId".into(), json!(run));
    TaskBody::checked(body).unwrap()
}

/// A run of four tasks: two succeeded, one failed, and one running (the provider is slow).
async fn a_run(stack: &Stack, client: &Client) -> (Uuid, Uuid) {
    let run = client.create_run("terminal", None).await.unwrap().id;
    for key in ["ok-1", "ok-2"] {
        let id = client.create(&in_run(run, key)).await.unwrap().task.id;
        assert_eq!(client.wait(id, WITHIN).await.unwrap().status.as_str(), "succeeded");
    }
    stack.stub.script([Reply::status(400)]);
    let id = client.create(&in_run(run, "bad-1")).await.unwrap().task.id;
    assert_eq!(client.wait(id, WITHIN).await.unwrap().status.as_str(), "failed");
    stack.stub.script([Reply::slow(Duration::from_secs(30))]);
    let slow = client.create(&in_run(run, "slow-1")).await.unwrap().task.id;
    (run, slow)
}

#[tokio::test]
async fn tail_keeps_the_runs_bar_below_its_changes_on_a_terminal_and_plain_lines_elsewhere() {
    let stack = Stack::start().await;
    let token = dev_token(APP);
    let client = Client::new(format!("http://{}", stack.server.address), token.clone()).unwrap();
    let (run, slow) = a_run(&stack, &client).await;
    let run_id = run.to_string();
    let args = ["tail", "--run", &run_id, "--until-done", "--interval", "0.2", "--timeout", "60"];

    let mut tail = Terminal::start(&stack, &token, &[], &args);
    tail.wait_for("3/4 done · succeeded 2 · failed 1 · canceled 0 · running 1 · queued 0", WITHIN).await;
    runs_get_shows_three_of_four_done(&stack, &token, &run_id).await;
    client.cancel(slow).await.unwrap();
    tail.wait_for("running -> canceled", WITHIN).await;
    assert_eq!(tail.finish(WITHIN).await, 0, "{}", tail.raw());
    let screen = tail.screen();
    let (bar, end) = (&screen[screen.len() - 2], &screen[screen.len() - 1]);
    assert!(
        bar.starts_with('[')
            && bar.ends_with(
                "4/4 done · succeeded 2 · failed 1 · canceled 1 · running 0 · queued 0 · run running"
            ),
        "the bar, last drawn, under the changes:\n{}",
        screen.join("\n")
    );
    // Split by status in proportion: succeeded 2 of 4 (15 cells), failed 1, canceled 1.
    let split = format!("[{}{}{}]", "█".repeat(15), "▓".repeat(8), "▒".repeat(7));
    assert!(bar.starts_with(&split), "{bar}");
    assert_eq!(
        end,
        &format!("run {run_id}: all 4 tasks ended {{\"canceled\": 1, \"failed\": 1, \"succeeded\": 2}}")
    );
    // A line a change, the bar never among them: the three ended tasks, then the slow one as it
    // ran (queued first, if the first read came before it started) and was canceled.
    let changes = &screen[..screen.len() - 2];
    assert!(changes.iter().all(|line| !line.starts_with('[')), "{}", screen.join("\n"));
    let ends = ["succeeded", "succeeded", "failed  WORKFLOW_AI_PROVIDER_ERROR"];
    assert!(changes.iter().zip(ends).all(|(line, end)| line.ends_with(end)), "{}", screen.join("\n"));
    assert!(
        changes.last().unwrap().contains("running -> canceled  WORKFLOW_AI_CANCELED"),
        "{}",
        screen.join("\n")
    );

    // Off a terminal, with NO_COLOR, with TERM=dumb: the plain lines, the same each time.
    let piped = aitasks(&stack, &token, &args).await.ok();
    assert_eq!(piped.stderr, format!("{end}\n"));
    let plain: Vec<&str> = piped.stdout.lines().collect();
    assert_eq!(plain.len(), 4, "each task as it is now: {}", piped.stdout);
    assert!(plain.iter().zip(&changes[..3]).all(|(now, seen)| now.trim_end() == seen), "{}", piped.stdout);
    assert!(plain[3].ends_with("  canceled  WORKFLOW_AI_CANCELED"), "{}", plain[3]);
    for env in [("NO_COLOR", "1"), ("TERM", "dumb")] {
        let mut quiet = Terminal::start(&stack, &token, &[env], &args);
        assert_eq!(quiet.finish(WITHIN).await, 0);
        assert!(!quiet.raw().contains('\x1b'), "{env:?}: no escape sequence: {:?}", quiet.raw());
        let mut expected: Vec<String> = plain.iter().map(|l| l.trim_end().to_owned()).collect();
        expected.push(end.clone());
        assert_eq!(quiet.screen(), expected, "{env:?}");
    }
    assert_json_only(&stack, &token, &[&args[..], &["--json"]].concat(), 0).await;
}

/// With `--json` on a terminal: JSON alone (a document or lines), no bar.
async fn assert_json_only(stack: &Stack, token: &str, args: &[&str], code: i32) {
    let mut json = Terminal::start(stack, token, &[], args);
    assert_eq!(json.finish(WITHIN).await, code, "{}", json.raw());
    assert!(!json.raw().contains('\x1b'), "no bar: {:?}", json.raw());
    let text = json.screen().join("\n");
    let values = serde_json::Deserializer::from_str(&text).into_iter::<Value>();
    assert!(values.collect::<Result<Vec<_>, _>>().is_ok_and(|v| !v.is_empty()), "JSON only: {text}");
}

/// `runs get` while the run's slow task runs: on a terminal its `tasks:` line starts with the
/// bar; off it, with `NO_COLOR` or `TERM=dumb`, the same line without; `--json` the run alone.
async fn runs_get_shows_three_of_four_done(stack: &Stack, token: &str, run_id: &str) {
    let counts = "3/4 done · succeeded 2 · failed 1 · canceled 0 · running 1 · queued 0";
    let mut get = Terminal::start(stack, token, &[], &["runs", "get", run_id]);
    assert_eq!(get.finish(WITHIN).await, 0, "{}", get.raw());
    let screen = get.screen();
    let split = format!("[{}{}{}]", "█".repeat(15), "▓".repeat(8), "░".repeat(7));
    assert_eq!(screen.last().unwrap(), &format!("tasks:       {split} {counts}"), "{}", screen.join("\n"));
    assert_eq!(screen[0], format!("id:          {run_id}"));

    let piped = aitasks(stack, token, &["runs", "get", run_id]).await.ok();
    let plain: Vec<&str> = piped.stdout.lines().collect();
    assert_eq!(plain.last().unwrap(), &format!("tasks:       {counts}"), "{}", piped.stdout);
    assert_eq!(plain[..plain.len() - 1], screen[..screen.len() - 1], "the run's lines, the same");
    for env in [("NO_COLOR", "1"), ("TERM", "dumb")] {
        let mut quiet = Terminal::start(stack, token, &[env], &["runs", "get", run_id]);
        assert_eq!(quiet.finish(WITHIN).await, 0);
        assert!(!quiet.raw().contains('\x1b'), "{env:?}: {:?}", quiet.raw());
        assert_eq!(quiet.screen(), plain, "{env:?}");
    }
    let json = aitasks(stack, token, &["runs", "get", run_id, "--json"]).await.ok().json();
    assert_eq!((json["id"].as_str(), json.get("tasks"), json.get("queued")), (Some(run_id), None, None));
}

#[tokio::test]
async fn batch_draws_sent_and_refused_on_a_terminal_and_prints_the_same_summary_everywhere() {
    let stack = Stack::start().await;
    let token = dev_token(APP);
    let file = scratch("terminal-batch").join("tasks.jsonl");
    let mut unknown_model = classify_body("mixed", "m-2");
    unknown_model["modelId"] = "no-such-model".into();
    let lines: [Value; 3] = [classify_body("mixed", "m-1"), unknown_model, classify_body("mixed", "m-1")];
    std::fs::write(&file, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let path = file.to_str().unwrap();

    let mut batch = Terminal::start(&stack, &token, &[], &["batch", path]);
    assert_eq!(batch.finish(WITHIN).await, 1, "a refused item: exit 1\n{}", batch.raw());
    let screen = batch.screen();
    assert_eq!(screen.len(), 3, "{}", screen.join("\n"));
    let bar = &screen[0];
    assert!(
        bar.contains("sent 3/3 · created 1 · existing 1 · refused 1 · ") && bar.contains(" items/s · "),
        "the bar's final figures: {bar}"
    );
    assert_eq!(screen[1], "3 items: created 1, existing 1, refused 1");
    assert!(screen[2].starts_with("line 2: "), "{}", screen[2]);

    // Off a terminal and with NO_COLOR: no bar, the same summary and refused line.
    let url = format!("http://{}", stack.server.address);
    let env = [("AITASKS_URL", url.as_str()), ("AITASKS_TOKEN", token.as_str())];
    let piped = aitasks_with(&env, &["batch", path]).await;
    assert_eq!((piped.code, piped.stdout.as_str()), (1, "3 items: created 0, existing 2, refused 1\n"));
    assert_eq!(piped.stderr.lines().collect::<Vec<_>>(), [screen[2].as_str()], "{}", piped.stderr);
    let mut quiet = Terminal::start(&stack, &token, &[("NO_COLOR", "1")], &["batch", path]);
    assert_eq!(quiet.finish(WITHIN).await, 1);
    assert_eq!(quiet.screen(), ["3 items: created 0, existing 2, refused 1", screen[2].as_str()]);
    assert_json_only(&stack, &token, &["batch", path, "--json"], 1).await;
}
