//! A run create whose database connection drops at its commit: the run is stored, the API
//! answers 503 (it cannot know the commit happened), and the client tries again. The run create
//! carries an `Idempotency-Key` that the client makes once per call and sends again on every
//! retry, so the retry answers the run the lost answer was about: one run, not two. Through the
//! library and through `aitasks runs create`, each on a stack whose database connections go
//! through a proxy that drops the one carrying the insert's answer.

use std::time::Duration;

use aitasks_client::{Client, RetryPolicy};
use aitasks_testkit::{app_base_url, dev_token, via, Stack, TcpProxy};

use crate::aitasks;

const APP: &str = "app-cli-dropped-commit";

/// A stack whose functions reach Postgres through a proxy the test can arm.
async fn stack() -> (Stack, TcpProxy) {
    let (_, server) = via(&app_base_url(), "-");
    let proxy = TcpProxy::start(&server).await;
    let stack = Stack::start_through_in_plaintext(&[("AITASK_LOCAL_POLLERS", "0")], &proxy).await;
    (stack, proxy)
}

async fn runs_of_scope(stack: &Stack, scope: &str) -> i64 {
    stack.db.count(&format!("SELECT count(*) FROM runs WHERE scope_id = '{scope}'")).await
}

#[tokio::test]
async fn the_librarys_retry_of_a_run_whose_commit_answer_was_lost_makes_one_run() {
    let (stack, proxy) = stack().await;
    let client = Client::builder(format!("http://{}", stack.server.address))
        .token(dev_token(APP))
        .retry(RetryPolicy {
            max_tries: 5,
            base_delay: Duration::from_millis(50),
            max_delay: Duration::from_millis(200),
            ..RetryPolicy::default()
        })
        .build()
        .unwrap();
    let scope = format!("dropped-{}", uuid::Uuid::new_v4().simple());
    proxy.cut_reply_containing(&scope);

    let run = client.create_run(&scope, Some("u1")).await.expect("the retry answers the run");
    assert_eq!(proxy.replies_cut(), 1, "the first try's insert committed and its answer was lost");
    let stored = runs_of_scope(&stack, &scope).await;
    println!("runs stored for one create_run whose first answer was lost: {stored}");
    assert_eq!(stored, 1, "the retry made a second run");
    assert_eq!(client.get_run(run.id).await.unwrap().scope_id, scope);
}

#[tokio::test]
async fn aitasks_runs_create_whose_commit_answer_was_lost_makes_one_run() {
    let (stack, proxy) = stack().await;
    let scope = format!("dropped-cli-{}", uuid::Uuid::new_v4().simple());
    proxy.cut_reply_containing(&scope);

    let run = aitasks(&stack, &dev_token(APP), &["runs", "create", "--scope", &scope, "--json"]).await.ok();
    assert_eq!(proxy.replies_cut(), 1, "the first try's insert committed and its answer was lost");
    let stored = runs_of_scope(&stack, &scope).await;
    println!("runs stored for one `aitasks runs create` whose first answer was lost: {stored}");
    assert_eq!(stored, 1, "the retry made a second run");
    assert_eq!(run.json()["scopeId"], scope.as_str());
}

/// `--idempotency-key`: the command run again with the key answers the same run; the key with
/// another scope is the API's 422.
#[tokio::test]
async fn aitasks_runs_create_with_a_key_of_ones_own_makes_one_run() {
    let stack = Stack::start().await;
    let token = dev_token(APP);
    let create = ["runs", "create", "--scope", "inbox", "--idempotency-key", "nightly-2026-12-05", "--json"];
    let first = aitasks(&stack, &token, &create).await.ok().json();
    let again = aitasks(&stack, &token, &create).await.ok().json();
    assert_eq!(first["id"], again["id"]);
    let other = aitasks(
        &stack,
        &token,
        &["runs", "create", "--scope", "other", "--idempotency-key", "nightly-2026-12-05", "--json"],
    )
    .await;
    assert_eq!((other.code, other.json()["error"]["code"].as_str()), (1, Some("IDEMPOTENCY_KEY_REUSED")));
    assert_eq!(runs_of_scope(&stack, "inbox").await + runs_of_scope(&stack, "other").await, 1);
}
