//! The variables a function's `App` reads, pointing at a test's database, queues and stub
//! provider: for tests that build an `App` in process (`Settings::from_lookup`).

use std::collections::HashMap;

use crate::{ca_file, StubProvider, TestDb, TestQueues, STUB_API_KEY};

/// The environment of a function on this test's parts, with `overrides` on top.
pub fn app_env(
    db: &TestDb,
    queues: &TestQueues,
    stub: &StubProvider,
    overrides: &[(&str, &str)],
) -> HashMap<String, String> {
    let mut variables: HashMap<String, String> = [
        ("DATABASE_URL", db.app_url.clone()),
        ("AITASK_DB_CA_FILE", ca_file().map(|p| p.display().to_string()).unwrap_or_default()),
        ("AITASK_TASK_QUEUE_URL", queues.tasks.clone()),
        ("AITASK_EVENTS_QUEUE_URL", queues.events.clone()),
        ("OPENAI_BASE_URL", stub.base_url.clone()),
        ("OPENAI_API_KEY", STUB_API_KEY.to_owned()),
    ]
    .into_iter()
    .filter(|(_, value)| !value.is_empty())
    .map(|(key, value)| (key.to_owned(), value))
    .collect();
    variables.extend(overrides.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    variables
}

/// A function's `App` on this test's parts, built in process as a cold start builds it (the
/// OpenAI-compatible client against the stub provider).
pub fn test_app(
    db: &TestDb,
    queues: &TestQueues,
    stub: &StubProvider,
    overrides: &[(&str, &str)],
) -> aitasks_runtime::App {
    let variables = app_env(db, queues, stub, overrides);
    let lookup = |name: &str| variables.get(name).cloned();
    aitasks_runtime::App::new(
        aitasks_runtime::Settings::from_lookup(lookup).expect("settings"),
        aitasks_providers::ModelProfiles::from_lookup(lookup).expect("model profiles"),
        aitasks_providers::HttpProvider::new(std::time::Duration::from_secs(5)).expect("provider client"),
        queues.sqs.clone(),
    )
    .expect("app")
}
