//! Reads as a user with many tasks sees them: the status filter on a scope of more tasks than one
//! answer looks at finds what it asks for by following "Next page" (a short page that says where
//! to look further), and a tenant over its read rate is told plainly, with when to try again.

use aitasks_testkit::Stack;

use crate::{open, sign_in, MODELS};

const APP: &str = "console-reads";

#[tokio::test]
async fn the_status_filter_pages_through_a_large_scope_and_the_read_rate_is_shown_plainly() {
    // A rate that lets the sign-in's page of runs (1,000 units) and a few pages of tasks (20 each)
    // through, but not the summary after them (1,000 more).
    let stack = Stack::start_with(&[
        ("AITASK_LOCAL_POLLERS", "0"),
        ("AITASK_MODELS", MODELS),
        ("AITASK_READ_RATE", "1"),
        ("AITASK_READ_BURST", "1500"),
    ])
    .await;
    // 1,500 tasks in one scope, in creation order; only the last one failed.
    stack
        .db
        .sql(&format!(
            "INSERT INTO tasks (id, app_id, scope_id, step_key, effect_key, kind, request, input_hash, \
                 model_id, max_attempts, status, attempts, output, error_code, error_message, completed_at) \
             SELECT ('00000000-0000-7000-8000-' || lpad(to_hex(n), 12, '0'))::uuid, '{APP}', 'big', \
                 CASE WHEN n = 1500 THEN 'the-failed-one' ELSE 'step' END, 'k' || n, 'classify', '{{}}', \
                 repeat('0', 64), 'default', 3, CASE WHEN n = 1500 THEN 'failed' ELSE 'succeeded' END, 1, \
                 CASE WHEN n = 1500 THEN NULL ELSE '\"pos\"'::jsonb END, \
                 CASE WHEN n = 1500 THEN 'WORKFLOW_AI_PROVIDER_ERROR' END, \
                 CASE WHEN n = 1500 THEN 'The provider failed with HTTP 500.' END, now() \
             FROM generate_series(1, 1500) n"
        ))
        .await;

    let browser = sign_in(&stack, APP).await;
    open(&browser, &stack, "#/scopes/big?status=failed").await;
    browser
        .wait_text("#tasks-results", "No task on this stretch matches; look further with Next page.")
        .await;
    browser.click("#next-page").await;
    let found = browser.wait_text("#tasks-results", "the-failed-one").await;
    assert!(found.contains("failed") && !found.contains("succeeded"), "{found}");
    browser.screenshot("scope-status-filter").await;

    // The summary would pass the tenant's read rate: the page says so, and when to come back.
    open(&browser, &stack, "#/summary").await;
    let refused = browser.wait_text("#summary-results", "WORKFLOW_AI_READ_RATE").await;
    assert!(refused.contains("try again in"), "{refused}");
    browser.screenshot("read-rate").await;
    browser.quit().await;
}
