//! Every statement of the store prepares on the migrated schema (its SQL is valid, its tables
//! and columns exist, every parameter's type can be inferred), as the functions' own role.

use aitasks_testkit::TestDb;

#[tokio::test]
async fn every_statement_prepares_on_the_migrated_schema() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let mut count = 0;
    for (name, text, params) in aitasks_store::queries::statements() {
        let statement = client.prepare(text).await.unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        assert_eq!(statement.params().len(), params.len(), "{name}: one Postgres parameter per name");
        count += 1;
    }
    assert!(count >= 40, "{count} statements");
}
