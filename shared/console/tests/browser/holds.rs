//! Holds in the console: holding a scope from the form, the active holds with their target, kind
//! and reason, Release (after which the hold leaves the active list for the released ones), and
//! a refused hold shown with its code; an automatic hold of a failing provider's profile has no
//! Release button, and shows among the released ones, released by its probe, once the provider
//! answers again.

use std::time::Duration;

use aitasks_testkit::{wait_until, Reply, Stack};
use serde_json::{json, Value};

use crate::selection::classify;
use crate::{open, sign_in, MODELS};

const APP: &str = "console-holds";

#[tokio::test]
async fn a_held_scope_is_shown_with_its_reason_and_released() {
    let stack = Stack::start_with(&[("AITASK_LOCAL_POLLERS", "0"), ("AITASK_MODELS", MODELS)]).await;
    let api = stack.api(APP);
    let browser = sign_in(&stack, APP).await;
    open(&browser, &stack, "#/holds").await;
    browser.wait_text("#holds-active", "Nothing is held.").await;

    // A profile that is not configured: refused, with its code; nothing held.
    browser.type_into("#hold-name", "no-such-profile").await;
    browser.click("#hold-submit").await;
    browser.wait_text("#hold-outcome", "AI_MODEL_UNKNOWN").await;
    let (_, holds) = api.get("/v1/holds?state=active").await;
    assert_eq!(holds["holds"].as_array().map(Vec::len), Some(0), "{holds}");

    // Hold a scope from the form; a profile through the API.
    browser.click("#hold-what option[value='scopeId']").await;
    browser.type_into("#hold-name", "reviews").await;
    browser.type_into("#hold-reason", "Supplier outage: wait for their fix").await;
    browser.click("#hold-submit").await;
    browser.wait_text("#hold-outcome", "Held scope reviews.").await;
    let (status, profile_hold) =
        api.post("/v1/holds", &json!({"profile": "default", "reason": "Provider incident"})).await;
    assert_eq!(status, 201, "{profile_hold}");
    browser.click("#refresh-holds").await;
    let active = browser.wait_text("#holds-active", "profile default").await;
    for expected in ["scope reviews", "Supplier outage: wait for their fix", "Provider incident", "manual"] {
        assert!(active.contains(expected), "{expected} in {active}");
    }
    browser.wait_text("#holds-released", "None yet.").await;
    browser.screenshot("hold").await;

    let (_, holds) = api.get("/v1/holds?state=active").await;
    let scope_hold = holds["holds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["target"]["scopeId"] == "reviews")
        .unwrap_or_else(|| panic!("the scope's hold: {holds}"))
        .clone();
    assert_eq!(
        (scope_hold["kind"].as_str(), scope_hold["reason"].as_str()),
        (Some("manual"), Some("Supplier outage: wait for their fix"))
    );
    let hold_id = scope_hold["id"].as_str().unwrap();

    // Release: it leaves the active list and shows among the released, released by a person.
    browser.click(&format!(".release-hold[data-hold='{hold_id}']")).await;
    browser.wait_text("dialog[open]", "Release scope reviews?").await;
    browser.click("#dialog-confirm").await;
    browser.wait_text("#hold-outcome", "Released scope reviews").await;
    let released = browser.wait_text("#holds-released", "scope reviews").await;
    assert!(released.contains("person"), "{released}");
    let active = browser.text("#holds-active").await.unwrap();
    assert!(!active.contains("scope reviews") && active.contains("profile default"), "{active}");
    let (_, stored) = api.get(&format!("/v1/holds/{hold_id}")).await;
    assert_eq!(stored["releasedBy"], "person", "{stored}");
    let (_, holds) = api.get("/v1/holds?state=active").await;
    assert_eq!(holds["holds"].as_array().map(Vec::len), Some(1), "{holds}");
    browser.quit().await;
}

#[tokio::test]
async fn an_automatic_hold_is_released_by_its_probe_not_by_a_button() {
    // A worker, a provider failing with 500s, a profile held after two tasks failing in a row,
    // a probe every half second.
    let stack = Stack::start_with(&[
        ("AITASK_LOCAL_POLLERS", "2"),
        ("AITASK_MODELS", MODELS),
        ("AITASK_HOLD_AFTER_FAILURES", "2"),
        ("AITASK_HOLD_PROBE_MS", "500"),
    ])
    .await;
    stack.stub.set_default(Reply::status(500));
    let api = stack.api(APP);
    for n in 1..=3 {
        let (status, task) = api
            .post("/v1/tasks", &classify(json!({"owner": {"scopeId": "inbox"}}), &format!("mail-{n}")))
            .await;
        assert_eq!(status, 201, "{task}");
    }
    let automatic = |holds: &Value| {
        holds["holds"].as_array().into_iter().flatten().find(|h| h["kind"] == "automatic").cloned()
    };
    wait_until("an automatic hold of the failing profile", || async {
        automatic(&api.get("/v1/holds?state=active").await.1).is_some()
    })
    .await;
    let hold = automatic(&api.get("/v1/holds?state=active").await.1).unwrap();
    assert_eq!(hold["target"], json!({"profile": "default"}), "{hold}");

    let browser = sign_in(&stack, APP).await;
    open(&browser, &stack, "#/holds").await;
    let active = browser.wait_text("#holds-active", "profile default").await;
    assert!(active.contains("automatic") && active.contains("released by its probe"), "{active}");
    let buttons = browser
        .eval("return document.querySelectorAll('#holds-active .release-hold').length", json!([]))
        .await;
    assert_eq!(buttons, json!(0), "no Release for an automatic hold");
    browser.wait_text("#holds-released", "None yet.").await;
    browser.screenshot("hold-automatic").await;

    // The provider answers again: the probe releases the hold.
    stack.stub.set_default(Reply::Auto);
    wait_until("the probe to release the hold", || async {
        automatic(&api.get("/v1/holds?state=active").await.1).is_none()
    })
    .await;
    browser.click("#refresh-holds").await;
    let released = browser.wait_text_for("#holds-released", "profile default", Duration::from_secs(30)).await;
    assert!(released.contains("probe"), "{released}");
    browser.wait_text("#holds-active", "Nothing is held.").await;
    browser.quit().await;
}
