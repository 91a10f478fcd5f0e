//! The connection to Postgres goes through rustls with certificate verification, as in AWS:
//! `make up` serves TLS with a throwaway CA, and the pool trusts it through `ca_file`.

use aitasks_store::{connect, PoolSettings};
use aitasks_testkit::*;

#[tokio::test]
async fn connections_are_encrypted_and_verified() {
    let db = TestDb::new().await;
    let ca = ca_file().expect("make up serves TLS and writes AITASK_DB_CA_FILE");
    let encrypted: bool = db
        .client()
        .await
        .query_one("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", &[])
        .await
        .unwrap()
        .get(0);
    assert!(encrypted, "sslmode=prefer takes TLS when the server offers it");

    let mut required = PoolSettings::new(format!("{}?sslmode=require", db.url));
    required.ca_file = Some(ca);
    let client = connect(&required).unwrap().get().await.expect("sslmode=require connects with the CA");
    assert_eq!(client.query_one("SELECT 1", &[]).await.unwrap().get::<_, i32>(0), 1);

    // Without the CA the server's certificate is not trusted: no silent fallback.
    let mut untrusted = PoolSettings::new(format!("{}?sslmode=require", db.url));
    untrusted.ca_file = Some(workspace_root().join("tests/fixtures/sqs-batch.json"));
    let refused = connect(&untrusted).unwrap().get().await;
    assert!(refused.is_err(), "an unknown CA is refused");
}
