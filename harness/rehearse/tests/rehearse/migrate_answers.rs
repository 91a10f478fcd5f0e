//! The migrations custom resource answers CloudFormation in every case, so a failure never
//! holds a stack until its timeout: migrations applied, migrations failing, the database
//! unreachable, a secret it may not read, no secret at all, and a deadline about to pass. (A
//! panic answering FAILED is tested in `functions/migrate/tests/panic_answers.rs`.)

use std::collections::BTreeMap;
use std::time::Duration;

use aitasks_rehearse::events::custom_resource_request;
use aitasks_rehearse::function_process::Invocation;
use aitasks_rehearse::local_aws::rds_secret;
use aitasks_rehearse::{Options, Rehearsal};
use serde_json::Value;

const MIGRATE: &str = "MigrateFunction";

/// Start a fresh migrate process (a cold start), send it a Create and return CloudFormation's
/// answer.
async fn create(
    rehearsal: &Rehearsal,
    changes: &[(&str, Option<String>)],
    deadline: Option<Duration>,
) -> Value {
    let changes: BTreeMap<String, Option<String>> =
        changes.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
    let mut process = rehearsal.start_with(MIGRATE, &changes).await.expect("migrate starts");
    assert_eq!(process.init_error(), None, "migrate never fails at start-up: it answers instead");
    let resource = rehearsal.deployment.custom_resources.first().expect("the migrations resource").clone();
    let (url, key) = rehearsal.bucket.presigned_url();
    let event = custom_resource_request(&resource, "Create", &url, &rehearsal.stack_id, None);
    let invocation = match deadline {
        Some(deadline) => process.invoke_within(event, deadline).await,
        None => process.invoke(event).await,
    };
    assert!(matches!(invocation, Invocation::Answered(_)), "{invocation:?}\n{}", process.log_tail(10));
    rehearsal
        .bucket
        .response(&key)
        .unwrap_or_else(|| panic!("CloudFormation got no answer\n{}", process.log_tail(10)))
}

fn failed_because(answer: &Value, words: &str) {
    assert_eq!(answer["Status"], "FAILED", "{answer}");
    let reason = answer["Reason"].as_str().unwrap_or_default();
    assert!(reason.contains(words), "the reason {reason:?} says {words:?}");
    assert!(!reason.contains("unused-with-trust"), "no password in the reason");
}

#[tokio::test]
async fn the_migrations_resource_answers_cloudformation_in_every_case() {
    let options = Options::for_checkout(&aitasks_testkit::workspace_root()).expect("tools");
    let rehearsal = Rehearsal::prepare(options).await.expect("the local stack");
    let secrets = &rehearsal.secrets_manager.client;
    let owner = rehearsal.secrets.owner_arn.clone();
    let owner_value = secrets.get_secret_value().secret_id(&owner).send().await.expect("owner secret");
    let owner_value = owner_value.secret_string().expect("a string").to_owned();
    let put = |value: String| {
        let owner = owner.clone();
        async move {
            secrets
                .put_secret_value()
                .secret_id(owner)
                .secret_string(value)
                .send()
                .await
                .expect("update the secret");
        }
    };

    // The functions' own login cannot change the schema: the migration fails.
    put(rds_secret(&aitasks_testkit::app_base_url(), &rehearsal.database).expect("secret")).await;
    failed_because(&create(&rehearsal, &[], None).await, "permission denied");

    // Nothing listens where the secret points.
    let closed =
        std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("address").port();
    let unreachable: Value = serde_json::from_str(&owner_value).expect("json");
    let mut unreachable = unreachable;
    unreachable["port"] = closed.into();
    put(unreachable.to_string()).await;
    failed_because(&create(&rehearsal, &[], None).await, "unavailable");

    put(owner_value.clone()).await;
    // A secret its role may not read (the functions' secret): refused by IAM, answered FAILED.
    let denied = create(
        &rehearsal,
        &[("AITASK_DATABASE_SECRET_ARN", Some(rehearsal.secrets.database_arn.clone()))],
        None,
    )
    .await;
    failed_because(&denied, "cannot read secret");
    // No secret configured at all.
    failed_because(
        &create(&rehearsal, &[("AITASK_DATABASE_SECRET_ARN", None)], None).await,
        "AITASK_DATABASE_SECRET_ARN",
    );

    // Another migrator holds the lock past the deadline: the answer comes before the deadline.
    let owner_url = aitasks_testkit::with_database(&aitasks_testkit::base_url(), &rehearsal.database);
    let holder = aitasks_testkit::admin(&owner_url).await;
    holder.execute("SELECT pg_advisory_lock($1)", &[&0x0061_6974_6173_6b73_i64]).await.expect("lock");
    let started = std::time::Instant::now();
    failed_because(&create(&rehearsal, &[], Some(Duration::from_secs(13))).await, "deadline");
    assert!(started.elapsed() < Duration::from_secs(13), "answered before the deadline");
    holder.execute("SELECT pg_advisory_unlock($1)", &[&0x0061_6974_6173_6b73_i64]).await.expect("unlock");

    // And with everything in place, it succeeds.
    let answer = create(&rehearsal, &[], None).await;
    assert_eq!(answer["Status"], "SUCCESS", "{answer}");
    assert_eq!(answer["PhysicalResourceId"], "aitasks-migrations");
    rehearsal.cleanup().await;
}
