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
    command.args(["--max-examples", &examples, "--workers", "2"]);
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
    assert!(text.contains("Stateful"), "the stateful phase ran");
}
