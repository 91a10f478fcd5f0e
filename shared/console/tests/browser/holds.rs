//! Holds in the console: holding a scope from the form, the active holds with their target, kind
//! and reason, Release (after which the hold leaves the active list for the released ones), and
//! a refused hold shown with its code.

use aitasks_testkit::Stack;
use serde_json::json;

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
    open(&browser, &stack, "#/holds").await;
    let active = browser.wait_text("#holds-active", "profile default").await;
    for expected in ["scope reviews", "Supplier outage: wait for their fix", "Provider incident", "manual"] {
        assert!(active.contains(expected), "{expected} in {active}");
    }
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
