//! The server agrees with its OpenAPI document: schemathesis (tools/fuzz/run.py) generates
//! requests from openapi.yaml, valid and invalid, against a whole stack, and runs every check it
//! has: no 5xx, every status and body documented, every valid request accepted, every invalid
//! one refused, 405 with `Allow` for a documented path's other methods, and the stateful phase
//! following the links from each create to its task (get, cancel, by effect key).
//!
//! `make test` runs a fixed seed (the same requests every time); `make fuzz` runs longer with a
//! new seed (FUZZ_EXAMPLES, FUZZ_SEED).

use std::process::Command;

use aitasks_testkit::*;

#[tokio::test]
async fn the_server_agrees_with_its_openapi_document() {
    let root = workspace_root();
    let tools =
        Command::new(root.join("scripts/fuzz-tools.sh")).output().expect("scripts/fuzz-tools.sh runs");
    assert!(tools.status.success(), "installing schemathesis: {}", String::from_utf8_lossy(&tools.stderr));
    let bin = String::from_utf8_lossy(&tools.stdout).trim().to_owned();

    let stack = Stack::start().await;
    let examples = std::env::var("FUZZ_EXAMPLES").unwrap_or_else(|_| "100".into());
    let seed = std::env::var("FUZZ_SEED").unwrap_or_else(|_| "20261201".into());
    let base_url = format!("http://{}", stack.server.address);
    let mut command = Command::new(format!("{bin}/python"));
    command.arg(root.join("tools/fuzz/run.py")).args([&base_url, DEV_SECRET, "default"]);
    // One worker: hypothesis parses lambdas with `ast.parse`, which CPython 3.11 (the machine's) does
    // not make thread-safe ("AST constructor recursion depth mismatch" from two workers).
    command.args(["--max-examples", &examples, "--workers", "1"]);
    if !seed.is_empty() {
        command.args(["--seed", &seed]);
    }
    let output =
        tokio::task::spawn_blocking(move || command.output()).await.unwrap().expect("the fuzzer runs");
    let text = String::from_utf8_lossy(&output.stdout);
    println!("{text}");
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "schemathesis found disagreements with openapi.yaml (above)");
    let generated = text
        .lines()
        .find_map(|line| line.trim().split_once(" generated,").map(|(count, _)| count.trim().to_owned()))
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0);
    assert!(generated >= 1000, "the fuzzer sent {generated} requests; at least 1000 expected");
    // "API Links: 21 covered / 39 selected / 39 total (30 inferred)": the stateful phase followed
    // links, the document's own (create → get, cancel, by effect key) among them.
    let covered = text
        .lines()
        .find_map(|line| line.trim().strip_prefix("API Links:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0);
    assert!(covered >= 5, "the stateful phase followed {covered} links");
}
