//! Provider-side limits as every worker instance shares them (`sql/provider_limits/`): per-minute
//! calls and reserved tokens over simulated minutes, held concurrency slots given back by their
//! holder only, and the line that keeps one tenant from starving another.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use aitasks_store as store;
use aitasks_testkit::*;
use chrono::Utc;
use store::{CallToCount, MinuteLimits, SlotToTake};
use uuid::Uuid;

fn call<'a>(profile_id: &'a str, at: chrono::DateTime<Utc>, reserve: i64) -> CallToCount<'a> {
    CallToCount { profile_id, app_id: APP, at, reserve, check_line: false }
}

const TOKENS: MinuteLimits = MinuteLimits { requests: None, tokens: Some(1000) };
const REQUESTS: MinuteLimits = MinuteLimits { requests: Some(5), tokens: None };

fn slot(profile_id: &str, slots: i32, lease: Duration) -> SlotToTake<'_> {
    SlotToTake { profile_id, app_id: APP, slots, lease, holder: Uuid::new_v4() }
}

#[tokio::test]
async fn a_tokens_per_minute_limit_holds_minute_after_minute_without_overshoot() {
    let db = TestDb::new().await;
    let client = db.client().await;
    // Simulated minutes a day ago, from the start of one.
    let start = store::minute_of(Utc::now() - chrono::TimeDelta::days(1));
    // A call every simulated second for three minutes, each reserving 300 tokens and using 250,
    // under 1000 a minute: a call starts only while its reservation fits.
    let mut admitted = [0u32; 3];
    for second in 0..180 {
        let at = start + chrono::TimeDelta::seconds(second);
        if store::start_call(&client, &call("p", at, 300), TOKENS).await.unwrap().counted() {
            store::reconcile_tokens(&client, "p", at, 300, Some(250)).await.unwrap();
            admitted[(second / 60) as usize] += 1;
        }
    }
    // 250 + 250 + 250 used, and a fourth reservation of 300 still fits (1050 > 1000 would not).
    assert_eq!(admitted, [3, 3, 3], "each minute admits while the next reservation fits");
    let rows = client
        .query("SELECT requests, tokens FROM provider_usage WHERE profile_id = 'p' ORDER BY minute", &[])
        .await
        .unwrap();
    let counted: Vec<(i32, i64)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(counted, vec![(3, 750); 3], "the real counts replace the reservations; none overshoots");

    // A call that failed without saying keeps its reservation.
    let at = start + chrono::TimeDelta::minutes(10);
    assert!(store::start_call(&client, &call("f", at, 400), TOKENS).await.unwrap().counted());
    store::reconcile_tokens(&client, "f", at, 400, None).await.unwrap();
    let kept: i64 = client
        .query_one("SELECT tokens FROM provider_usage WHERE profile_id = 'f'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(kept, 400);

    // Requests per minute, on another profile: exactly the limit.
    let mut calls = 0;
    for second in 0..60 {
        let at = start + chrono::TimeDelta::seconds(second);
        calls += u32::from(store::start_call(&client, &call("q", at, 0), REQUESTS).await.unwrap().counted());
    }
    assert_eq!(calls, 5);

    // The sweeper prunes the counts of minutes over an hour old, and only those.
    let recent = Utc::now();
    assert!(store::start_call(&client, &call("r", recent, 0), REQUESTS).await.unwrap().counted());
    assert_eq!(
        store::prune_provider_minutes(&client, 100).await.unwrap(),
        5,
        "the 3 + 1 + 1 simulated minutes of a day ago"
    );
    let left: i64 = client.query_one("SELECT count(*) FROM provider_usage", &[]).await.unwrap().get(0);
    assert_eq!(left, 1, "this minute's count stays");
}

/// 16 workers start a call at the same instant of a fresh minute: the reservations go in one at
/// a time on the minute's row, so the tokens that minute ever counts stay within the limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_workers_starting_together_never_overshoot_the_tokens_per_minute() {
    let db = TestDb::new().await;
    let minute = store::minute_of(Utc::now() + chrono::TimeDelta::minutes(5));
    let peak = Arc::new(std::sync::Mutex::new(0i64));
    let started = Arc::new(AtomicUsize::new(0));
    let barrier = Arc::new(tokio::sync::Barrier::new(16));
    let workers = (0..16).map(|_| {
        let (pool, peak, started, barrier) =
            (db.pool.clone(), peak.clone(), started.clone(), barrier.clone());
        tokio::spawn(async move {
            let client = store::client(&pool).await.unwrap();
            barrier.wait().await;
            // Each call reserves 300 (an input bound and the output cap) and really uses 280.
            if store::start_call(&client, &call("m", minute, 300), TOKENS).await.unwrap().counted() {
                started.fetch_add(1, Ordering::SeqCst);
                let row = client
                    .query_one("SELECT tokens FROM provider_usage WHERE profile_id = 'm'", &[])
                    .await
                    .unwrap();
                let tokens: i64 = row.get(0);
                {
                    let mut peak = peak.lock().unwrap();
                    *peak = (*peak).max(tokens);
                }
                store::reconcile_tokens(&client, "m", minute, 300, Some(280)).await.unwrap();
            }
        })
    });
    for worker in futures::future::join_all(workers).await {
        worker.unwrap();
    }
    let client = db.client().await;
    let used: i64 = client
        .query_one("SELECT tokens FROM provider_usage WHERE profile_id = 'm'", &[])
        .await
        .unwrap()
        .get(0);
    let started = started.load(Ordering::SeqCst);
    let peak = *peak.lock().unwrap();
    println!("16 workers at a minute boundary: {started} calls started, {used} tokens used of 1000, peak held {peak}");
    assert_eq!(started, 3, "three reservations of 300 fit in 1000; the other 13 wait");
    assert!(peak <= 1000 && used <= 1000, "no overshoot: held at most {peak}, used {used}");
}

#[tokio::test]
async fn concurrent_callers_never_hold_more_slots_than_the_limit() {
    let db = TestDb::new().await;
    // 16 callers on their own connections race for 3 slots, 10 rounds each.
    let peak = Arc::new(AtomicUsize::new(0));
    let holding = Arc::new(AtomicUsize::new(0));
    let callers = (0..16).map(|_| {
        let (pool, peak, holding) = (db.pool.clone(), peak.clone(), holding.clone());
        tokio::spawn(async move {
            let client = store::client(&pool).await.unwrap();
            let mut held = 0;
            for _ in 0..10 {
                let wanted = slot("p", 3, Duration::from_secs(30));
                if let Some(number) = store::take_slot(&client, &wanted).await.unwrap() {
                    let now = holding.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(40)).await;
                    holding.fetch_sub(1, Ordering::SeqCst);
                    store::free_slot(&client, "p", number, wanted.holder).await.unwrap();
                    held += 1;
                } else {
                    // Busy: look again a little later, as a worker would.
                    tokio::time::sleep(Duration::from_millis(15)).await;
                }
            }
            held
        })
    });
    let held: usize = futures::future::join_all(callers).await.into_iter().map(|h| h.unwrap()).sum();
    assert!(held >= 10, "slots were taken and given back: {held}");
    let peak = peak.load(Ordering::SeqCst);
    assert!(peak <= 3, "never more than the limit: {peak}");
    assert!(peak >= 2, "the callers overlapped, so the limit was tested: {peak}");

    // A holder that never gives its slot back loses it when its lease runs out.
    let client = db.client().await;
    let mut taken = Vec::new();
    for _ in 0..2 {
        let wanted = slot("short", 2, Duration::from_secs(2));
        taken.push(store::take_slot(&client, &wanted).await.unwrap().map(|n| (n, wanted.holder)));
    }
    assert!(taken.iter().all(Option::is_some));
    assert_eq!(
        store::take_slot(&client, &slot("short", 2, Duration::from_secs(30))).await.unwrap(),
        None,
        "all busy"
    );
    wait_until("the two 2 s leases to run out", || async {
        db.count("SELECT count(*) FROM provider_slots WHERE profile_id = 'short' AND held_until >= now()")
            .await
            == 0
    })
    .await;
    let next = slot("short", 2, Duration::from_secs(30));
    let number = store::take_slot(&client, &next).await.unwrap().expect("a slot whose lease ran out");

    // The late holder of that slot gives it back now: it frees nothing, the new holder keeps it.
    let (late_number, late_holder) = taken.into_iter().flatten().find(|(n, _)| *n == number).unwrap();
    store::free_slot(&client, "short", late_number, late_holder).await.unwrap();
    let busy: i64 = client
        .query_one(
            "SELECT count(*) FROM provider_slots WHERE profile_id = 'short' AND held_until > now()",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(busy, 1, "the slot is still the new holder's");
    store::free_slot(&client, "short", number, next.holder).await.unwrap();
}

/// Tenant A holds the only slot and keeps asking; tenant B is refused once and waits in line:
/// the slot, once free, is left for B, and A is refused until B has been served.
#[tokio::test]
async fn a_free_slot_goes_to_the_tenant_that_waited_not_to_the_one_that_was_just_served() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let take = |app_id: &'static str| SlotToTake {
        profile_id: "one",
        app_id,
        slots: 1,
        lease: Duration::from_secs(30),
        holder: Uuid::new_v4(),
    };
    let a = take("flood");
    let a_slot = store::take_slot(&client, &a).await.unwrap().expect("the free slot");
    assert_eq!(store::take_slot(&client, &take("quiet")).await.unwrap(), None, "busy");
    store::wait_in_line(&client, "one", "quiet", Duration::from_secs(10)).await.unwrap();
    store::free_slot(&client, "one", a_slot, a.holder).await.unwrap();
    assert_eq!(store::take_slot(&client, &take("flood")).await.unwrap(), None, "left for the tenant in line");
    let b = take("quiet");
    let b_slot = store::take_slot(&client, &b).await.unwrap().expect("the tenant in line is served");
    store::free_slot(&client, "one", b_slot, b.holder).await.unwrap();
    assert!(store::take_slot(&client, &take("flood")).await.unwrap().is_some(), "then the flood again");

    // The same line for the calls of a minute: held back only when the minute's room would not
    // also leave a call to each tenant ahead.
    let minute = store::minute_of(Utc::now());
    let limits = MinuteLimits { requests: Some(2), tokens: None };
    let first = |app_id| CallToCount { profile_id: "rpm", app_id, at: minute, reserve: 0, check_line: true };
    assert!(store::start_call(&client, &first("flood"), limits).await.unwrap().counted());
    store::wait_in_line(&client, "rpm", "quiet", Duration::from_secs(10)).await.unwrap();
    assert_eq!(
        store::start_call(&client, &first("flood"), limits).await.unwrap(),
        store::CallStart::HeldBack,
        "the last call of the minute is the quiet tenant's"
    );
    assert!(store::start_call(&client, &first("quiet"), limits).await.unwrap().counted());
    assert_eq!(store::start_call(&client, &first("flood"), limits).await.unwrap(), store::CallStart::AtLimit);

    // The line's idle tenants are pruned after an hour.
    db.sql("UPDATE provider_line SET last_served = now() - interval '2 hours', waiting_until = NULL").await;
    assert_eq!(store::prune_provider_line(&client, 100).await.unwrap(), 4);
}
