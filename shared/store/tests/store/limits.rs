//! Provider-side limits as every worker instance shares them (`sql/limits/`): per-minute calls
//! and tokens over simulated minutes, and leased concurrency slots.

use std::time::Duration;

use aitasks_store as store;
use aitasks_testkit::*;
use chrono::Utc;

#[tokio::test]
async fn a_tokens_per_minute_limit_holds_minute_after_minute() {
    let db = TestDb::new().await;
    let client = db.client().await;
    // Simulated minutes a day ago, from the start of one.
    let start = store::minute_of(Utc::now() - chrono::TimeDelta::days(1));
    // A call every simulated second for three minutes, each using 300 tokens, under 1000 a minute.
    let mut admitted = [0u32; 3];
    for second in 0..180 {
        let at = start + chrono::TimeDelta::seconds(second);
        if store::start_call(&client, "p", at, None, Some(1000)).await.unwrap() {
            store::add_tokens(&client, "p", at, 300).await.unwrap();
            admitted[(second / 60) as usize] += 1;
        }
    }
    // 0, 300, 600 and 900 are under the limit: the fourth call is the last one a minute lets in.
    assert_eq!(admitted, [4, 4, 4], "each minute admits until its tokens reach the limit");
    let rows = client
        .query("SELECT requests, tokens FROM provider_usage WHERE profile_id = 'p' ORDER BY minute", &[])
        .await
        .unwrap();
    let counted: Vec<(i32, i64)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(counted, vec![(4, 1200); 3], "a minute overshoots by at most the call in flight");

    // Requests per minute, on another profile: exactly the limit.
    let mut calls = 0;
    for second in 0..60 {
        let at = start + chrono::TimeDelta::seconds(second);
        calls += u32::from(store::start_call(&client, "q", at, Some(5), None).await.unwrap());
    }
    assert_eq!(calls, 5);

    // The sweeper prunes the counts of minutes over an hour old, and only those.
    let recent = Utc::now();
    assert!(store::start_call(&client, "r", recent, Some(5), None).await.unwrap());
    assert_eq!(
        store::prune_provider_minutes(&client, 100).await.unwrap(),
        4,
        "the 3 + 1 simulated minutes of a day ago"
    );
    let left: i64 = client.query_one("SELECT count(*) FROM provider_usage", &[]).await.unwrap().get(0);
    assert_eq!(left, 1, "this minute's count stays");
}

#[tokio::test]
async fn concurrent_callers_never_hold_more_slots_than_the_limit() {
    let db = TestDb::new().await;
    // 16 callers on their own connections race for 3 slots, 10 rounds each.
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let holding = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let callers = (0..16).map(|_| {
        let (pool, peak, holding) = (db.pool.clone(), peak.clone(), holding.clone());
        tokio::spawn(async move {
            let client = store::client(&pool).await.unwrap();
            let mut held = 0;
            for _ in 0..10 {
                if let Some(slot) = store::take_slot(&client, "p", 3, Duration::from_secs(30)).await.unwrap()
                {
                    let now = holding.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                    peak.fetch_max(now, std::sync::atomic::Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(40)).await;
                    holding.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                    store::free_slot(&client, "p", slot).await.unwrap();
                    held += 1;
                }
            }
            held
        })
    });
    let held: usize = futures::future::join_all(callers).await.into_iter().map(|h| h.unwrap()).sum();
    assert!(held >= 10, "slots were taken and given back: {held}");
    let peak = peak.load(std::sync::atomic::Ordering::SeqCst);
    assert!(peak <= 3, "never more than the limit: {peak}");
    assert!(peak >= 2, "the callers overlapped, so the limit was tested: {peak}");

    // A holder that never gives its slot back loses it when its lease runs out.
    let client = db.client().await;
    let mut taken = Vec::new();
    for _ in 0..2 {
        taken.push(store::take_slot(&client, "short", 2, Duration::from_secs(2)).await.unwrap());
    }
    assert!(taken.iter().all(Option::is_some));
    assert_eq!(
        store::take_slot(&client, "short", 2, Duration::from_secs(30)).await.unwrap(),
        None,
        "all busy"
    );
    tokio::time::sleep(Duration::from_millis(2200)).await;
    assert!(store::take_slot(&client, "short", 2, Duration::from_secs(30)).await.unwrap().is_some());
}
