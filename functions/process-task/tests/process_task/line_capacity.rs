//! Review: the tenants' line at a per-minute limit (sql/provider_limits/start_call.sql). A
//! tenant waiting in line holds back every first call of every tenant served more recently, not
//! one call's worth of the minute, and a first call refused by the line is given back until the
//! next minute, exactly as one refused by the limit. So the minute's room goes unused while
//! tasks wait: tenants whose tasks come back in another order than the line's lose a minute each
//! time, and a tenant that waits with no task coming back (canceled, deleted, answered by a
//! fallback) costs every other tenant a minute.

use std::time::Duration;

use crate::common::*;
use aitasks_store::{self as store, CallToCount, MinuteLimits, Task};
use aitasks_testkit::*;
use chrono::Utc;
use serde_json::json;

const RPM: MinuteLimits = MinuteLimits { requests: Some(100), tokens: None };

async fn tenant_task(db: &TestDb, tenant: &str, key: &str) -> Task {
    let new = new_task(tenant, app_owner("s"), key);
    store::create_task(&db.client().await, &new).await.unwrap().into_task()
}

/// The line as the previous minute left it, through the statements a worker runs: `tenants`
/// were served in that order, then each was refused at the limit. A refused worker waits in
/// line until the next minute plus its jitter and LINE_GRACE (5 s): as this minute has just
/// begun (the given-back tasks come back at its start), each still waits about 5 s.
async fn served_then_refused_last_minute(db: &TestDb, tenants: &[&str]) {
    let client = db.client().await;
    let last_minute = store::minute_of(Utc::now() - chrono::TimeDelta::minutes(1));
    for tenant in tenants {
        let call = CallToCount {
            profile_id: "default",
            app_id: tenant,
            at: last_minute,
            reserve: 0,
            check_line: true,
        };
        assert!(store::start_call(&client, &call, RPM).await.unwrap().counted());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for tenant in tenants {
        store::wait_in_line(&client, "default", tenant, Duration::from_secs(5)).await.unwrap();
    }
}

fn rpm_profile(stub: &StubProvider) -> String {
    json!({"default": {"model": "m", "baseUrl": stub.base_url, "limits": {"requestsPerMinute": 100}}})
        .to_string()
}

async fn avoid_minute_boundary() {
    let second = chrono::Timelike::second(&Utc::now());
    if second > 45 {
        tokio::time::sleep(Duration::from_secs(u64::from(61 - second))).await;
    }
}

/// Three tenants refused last minute, three tasks each, 100 calls free this minute: all nine
/// should run. Their tasks come back in the reverse of the line's order (t3's, then t2's, then
/// t1's): every one but t1's first is refused by the line and given back for the next minute.
#[tokio::test]
async fn a_minute_with_room_for_every_waiting_task_runs_them_all() {
    avoid_minute_boundary().await;
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let models = rpm_profile(&stub);
    let app = app(&db, &queues, &stub, &[("AITASK_MODELS", models.as_str())]).await;
    served_then_refused_last_minute(&db, &["t1", "t2", "t3"]).await;
    for tenant in ["t3", "t2", "t1"] {
        let mut tasks = Vec::new();
        for n in 0..3 {
            tasks.push(tenant_task(&db, tenant, &format!("{tenant}-{n}")).await);
        }
        process_task::handle(&app, event(&tasks.iter().collect::<Vec<_>>(), Duration::from_secs(60)))
            .await
            .unwrap();
    }
    let given_back = db.count("SELECT count(*) FROM tasks WHERE status = 'queued' AND attempts = 0").await;
    println!("calls {} of 100 free; {given_back} of 9 tasks given back until the next minute", stub.calls());
    assert_eq!(stub.calls(), 9, "{given_back} tasks wait a minute while 100 calls are free");
}

/// A tenant refused last minute whose task then went away (canceled, deleted, or answered by a
/// fallback profile) is still "waiting" until a few seconds into this minute: the other tenant's
/// three tasks, with 100 calls free and nobody else calling, all wait for the next minute.
#[tokio::test]
async fn a_tenant_in_line_with_no_task_left_costs_another_tenant_nothing() {
    avoid_minute_boundary().await;
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let models = rpm_profile(&stub);
    let app = app(&db, &queues, &stub, &[("AITASK_MODELS", models.as_str())]).await;
    served_then_refused_last_minute(&db, &["gone", "busy"]).await;
    let mut tasks = Vec::new();
    for n in 0..3 {
        tasks.push(tenant_task(&db, "busy", &format!("busy-{n}")).await);
    }
    process_task::handle(&app, event(&tasks.iter().collect::<Vec<_>>(), Duration::from_secs(60)))
        .await
        .unwrap();
    let given_back = db.count("SELECT count(*) FROM tasks WHERE status = 'queued' AND attempts = 0").await;
    println!("calls {}; {given_back} of 3 tasks given back until the next minute", stub.calls());
    assert_eq!(stub.calls(), 3, "{given_back} tasks wait a minute for a tenant with nothing to run");
}
