//! Review: a provider's usage report is input like any other. The worker clamps what a provider
//! says it used to i64::MAX (runtime worker/permit.rs) and reconcile_tokens.sql writes it into the
//! minute's row: every later start_call.sql of that minute then computes `tokens + :reserve`
//! past bigint's range and fails, so the profile takes no call from any tenant for the rest of
//! the minute, even with no tokens limit at all.

use aitasks_store as store;
use aitasks_testkit::*;
use chrono::Utc;
use store::{CallToCount, MinuteLimits};

#[tokio::test]
async fn an_absurd_usage_report_does_not_stop_the_profile_s_other_calls() {
    let db = TestDb::new().await;
    let client = db.client().await;
    // A fresh minute, with room for 100 calls and no tokens limit.
    let minute = store::minute_of(Utc::now() + chrono::TimeDelta::minutes(5));
    let limits = MinuteLimits { requests: Some(100), tokens: None };
    let call = CallToCount { profile_id: "p", app_id: APP, at: minute, reserve: 300, check_line: false };
    assert!(store::start_call(&client, &call, limits).await.unwrap().counted());
    // The provider answered `"usage": {"prompt_tokens": 18446744073709551615, ...}`.
    store::reconcile_tokens(&client, "p", minute, 300, Some(i64::MAX)).await.unwrap();
    let other = CallToCount { app_id: "another-tenant", ..call };
    let next = store::start_call(&client, &other, limits).await;
    assert!(
        matches!(next, Ok(store::CallStart::Counted)),
        "the second call of a minute with 99 calls left: {next:?}"
    );
}
