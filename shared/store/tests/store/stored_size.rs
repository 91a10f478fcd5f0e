//! The contracts crate measures a request's stored size without a round trip (so 413 can come
//! before the model and run checks). This holds it to what Postgres really stores.

use aitasks_contracts::stored_size;
use aitasks_testkit::TestDb;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};
use serde_json::{json, Value};

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        (-30i32..30, 1u32..1000).prop_map(|(e, m)| json!(f64::from(m) * 10f64.powi(e))),
        "\\PC{0,8}".prop_map(Value::String),
        "[\u{1}-\u{1f}\"\\\\/é]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 30, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map("\\PC{0,4}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

#[tokio::test]
async fn stored_size_matches_postgres_jsonb_text() {
    let db = TestDb::new().await;
    let client = db.client().await;
    let statement = client.prepare("SELECT octet_length($1::jsonb::text)::bigint").await.unwrap();

    let mut cases: Vec<Value> = Vec::new();
    let mut runner = TestRunner::new(Config {
        cases: 500,
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        ..Config::default()
    });
    let strategy = any_json().prop_filter("no NUL", |v| !v.to_string().contains("\\u0000"));
    for _ in 0..500 {
        cases.push(strategy.new_tree(&mut runner).unwrap().current());
    }
    cases.extend([json!(1e300), json!(-1.5e-300), json!(0.1), json!(-0.0), json!(u64::MAX), json!(i64::MIN)]);

    let mut mismatches = Vec::new();
    for value in &cases {
        let stored: i64 = client.query_one(&statement, &[&value]).await.unwrap().get(0);
        if stored as usize != stored_size(value) {
            mismatches.push(format!("{value}: postgres {stored}, ours {}", stored_size(value)));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} differ:\n{}",
        mismatches.len(),
        cases.len(),
        mismatches.join("\n")
    );
}
