//! Text a tenant chose (a scope id, an effect key) reaches the terminal escaped: an escape
//! sequence in it is printed as `\u{1b}…`, never sent raw to move the cursor, retitle the
//! window or set the clipboard. `--json` is JSON, whose own escaping does the same.

use aitasks_testkit::{dev_token, Stack};

use crate::{aitasks, classify_body};

const APP: &str = "app-cli-hostile";

/// An OSC 52 clipboard write and a screen clear.
const HOSTILE: &str = "k\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}[2J";

#[tokio::test]
async fn a_scope_id_and_an_effect_key_with_escape_sequences_are_printed_escaped() {
    let stack = Stack::start().await;
    let token = dev_token(APP);
    let run = aitasks(&stack, &token, &["runs", "create", "--scope", HOSTILE, "--json"]).await.ok().json();
    let run_id = run["id"].as_str().unwrap().to_owned();
    let shown = aitasks(&stack, &token, &["runs", "get", &run_id]).await.ok();
    assert!(!shown.stdout.contains('\u{1b}') && !shown.stdout.contains('\u{7}'), "{:?}", shown.stdout);
    assert!(shown.stdout.contains("k\\u{1b}]52;c;cHduZWQ=\\u{7}\\u{1b}[2J"), "{}", shown.stdout);

    let path = crate::scratch("hostile").join("body.json");
    std::fs::write(&path, classify_body("inbox", HOSTILE).to_string()).unwrap();
    aitasks(&stack, &token, &["create", "--file", path.to_str().unwrap(), "--wait", "60"]).await.ok();
    let got = aitasks(&stack, &token, &["get", "--effect-key", HOSTILE]).await.ok();
    assert!(!got.stdout.contains('\u{1b}'), "{:?}", got.stdout);
    assert!(got.stdout.contains("effect key:  k\\u{1b}]52;c;cHduZWQ=\\u{7}\\u{1b}[2J"), "{}", got.stdout);
    let listed = aitasks(&stack, &token, &["list", "--scope", "inbox"]).await.ok();
    assert!(!listed.stdout.contains('\u{1b}'), "{:?}", listed.stdout);
}
