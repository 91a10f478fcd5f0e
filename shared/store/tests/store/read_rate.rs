//! Each tenant's read budget in Postgres (`spend_reads`, migrations/V31): a token bucket shared by
//! every instance of the API, exact under concurrent spends from many connections, one tenant's
//! spends never touching another's.

use std::time::Duration;

use aitasks_store::{spend_reads, ReadBucket, ReadSpend};
use aitasks_testkit::TestDb;

#[tokio::test]
async fn a_tenant_spends_its_burst_then_waits_for_its_rate_and_others_are_untouched() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let bucket = ReadBucket { per_second: 1.0, burst: 1_000.0 };
    assert_eq!(spend_reads(&client, "a", 1_000.0, bucket).await.unwrap(), ReadSpend::Spent, "full at first");
    let ReadSpend::Short { refilled_in } = spend_reads(&client, "a", 20.0, bucket).await.unwrap() else {
        panic!("the bucket is empty")
    };
    assert!(
        refilled_in > Duration::from_secs(18) && refilled_in <= Duration::from_secs(20),
        "20 units at 1 a second: {refilled_in:?}"
    );
    assert_eq!(spend_reads(&client, "b", 1_000.0, bucket).await.unwrap(), ReadSpend::Spent, "b has its own");
    // Time passes (the row's last refill moved back): the refill never passes the burst.
    db.sql("UPDATE read_budgets SET refilled_at = now() - interval '1 hour' WHERE app_id = 'a'").await;
    assert_eq!(spend_reads(&client, "a", 1_000.0, bucket).await.unwrap(), ReadSpend::Spent);
    assert!(matches!(spend_reads(&client, "a", 1.0, bucket).await.unwrap(), ReadSpend::Short { .. }));
}

/// Many instances spending at once, each on its own connection: exactly the burst passes.
#[tokio::test]
async fn concurrent_spends_from_many_connections_pass_exactly_the_burst() {
    let db = TestDb::new().await;
    let bucket = ReadBucket { per_second: 0.001, burst: 5_000.0 };
    let mut clients = Vec::new();
    for _ in 0..20 {
        clients.push(db.client().await);
    }
    let spends = clients.iter().map(|client| spend_reads(client, "busy", 1_000.0, bucket));
    let outcomes = futures::future::join_all(spends).await;
    let spent = outcomes.iter().filter(|outcome| matches!(outcome, Ok(ReadSpend::Spent))).count();
    assert_eq!(spent, 5, "{outcomes:?}");
    assert_eq!(db.count("SELECT count(*) FROM read_budgets").await, 1, "one row for the tenant");
}
