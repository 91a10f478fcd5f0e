//! `batch`: a 5,000-line file loaded in chunks with its counts printed, sent again (every item
//! existing), and items the API refuses alone counted and listed by line.

use aitasks_testkit::{dev_token, Stack};

use crate::{aitasks, classify_body, scratch};

const APP: &str = "app-cli-batch";

fn jsonl(lines: impl IntoIterator<Item = String>) -> String {
    lines.into_iter().collect::<Vec<_>>().join("\n") + "\n"
}

#[tokio::test]
async fn a_5000_line_file_is_loaded_in_chunks_and_counted() {
    let stack = Stack::start().await;
    let token = dev_token(APP);
    let dir = scratch("batch");
    let file = dir.join("tasks.jsonl");
    std::fs::write(&file, jsonl((0..5_000).map(|i| classify_body("bulk", &format!("doc-{i}")).to_string())))
        .unwrap();
    let path = file.to_str().unwrap();

    let loaded = aitasks(&stack, &token, &["batch", path]).await.ok();
    assert_eq!(loaded.stdout.trim(), "5000 items: created 5000, existing 0, refused 0", "{}", loaded.stderr);
    let stored = stack
        .db
        .count(&format!("SELECT count(*) FROM tasks WHERE app_id = '{APP}' AND scope_id = 'bulk'"))
        .await;
    assert_eq!(stored, 5_000, "one task a line in the database");
    let listed = aitasks(&stack, &token, &["list", "--scope", "bulk", "--json"]).await.ok().json();
    assert_eq!(listed["count"], 5_000, "and through the API's listing");

    // The same file again: every line finds its task by its effect key.
    let again = aitasks(&stack, &token, &["batch", path, "--json"]).await.ok().json();
    assert_eq!(
        (
            again["total"].as_u64(),
            again["created"].as_u64(),
            again["existing"].as_u64(),
            again["refused"].as_u64()
        ),
        (Some(5_000), Some(0), Some(5_000), Some(0))
    );
    let stored = stack.db.count(&format!("SELECT count(*) FROM tasks WHERE app_id = '{APP}'")).await;
    assert_eq!(stored, 5_000, "nothing twice");
}

#[tokio::test]
async fn items_the_api_refuses_are_counted_and_listed_by_line_and_store_nothing() {
    let stack = Stack::start().await;
    let token = dev_token(APP);
    let dir = scratch("refused");
    let file = dir.join("tasks.jsonl");
    let mut unknown_model = classify_body("mixed", "m-2");
    unknown_model["modelId"] = "no-such-model".into();
    let lines = [
        classify_body("mixed", "m-1").to_string(),
        String::new(),
        unknown_model.to_string(),
        classify_body("mixed", "m-1").to_string(),
    ];
    std::fs::write(&file, jsonl(lines)).unwrap();
    let run = aitasks(&stack, &token, &["batch", file.to_str().unwrap(), "--json"]).await;
    assert_eq!(run.code, 1, "a refused item: exit 1\n{}", run.stderr);
    let summary = run.json();
    assert_eq!(
        (
            summary["total"].as_u64(),
            summary["created"].as_u64(),
            summary["existing"].as_u64(),
            summary["refused"].as_u64()
        ),
        (Some(3), Some(1), Some(1), Some(1)),
        "{summary}"
    );
    let refused = &summary["refusedItems"][0];
    assert_eq!(
        (refused["line"].as_u64(), refused["status"].as_u64()),
        (Some(3), Some(400)),
        "blank lines count"
    );
    assert_eq!(refused["error"]["code"], "AI_MODEL_UNKNOWN");

    let text = aitasks(&stack, &token, &["batch", file.to_str().unwrap()]).await;
    assert_eq!(text.code, 1);
    assert_eq!(text.stdout.trim(), "3 items: created 0, existing 2, refused 1");
    assert!(text.stderr.contains("line 3: AI_MODEL_UNKNOWN (HTTP 400)"), "{}", text.stderr);

    let missing = aitasks(&stack, &token, &["get", "--effect-key", "m-2", "--json"]).await;
    assert_eq!(
        (missing.code, missing.json()["error"]["code"].as_str()),
        (1, Some("NOT_FOUND")),
        "the refused item stored nothing"
    );
}
