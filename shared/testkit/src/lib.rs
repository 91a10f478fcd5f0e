//! Test support for aitasks. Everything here is real: a Postgres database per test, SQS queues
//! on the SQS-compatible server, an HTTP server speaking the OpenAI chat-completions wire
//! format, HS256 tokens, and the dev server as a child process.
//!
//! Tests need `make up` to have run (Postgres and the SQS-compatible server); the locations
//! are read from the environment or, failing that, from `.local/env`.

mod db;
mod dev_server;
mod queues;
mod random;
pub mod runtime_api;
mod stats;
mod stub_provider;
mod tokens;

use std::path::PathBuf;

pub use db::*;
pub use dev_server::{Answer, Api, DevServer, Stack, STUB_API_KEY};
pub use queues::TestQueues;
pub use random::Xorshift;
pub use stats::percentile;
pub use stub_provider::{Reply, StubProvider};
pub use tokens::{dev_token, token_with, DEV_SECRET};

/// The repository root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A variable from the environment, or from `.local/env` (written by `make up`).
pub fn local_env(name: &str) -> String {
    try_local_env(name)
        .unwrap_or_else(|| panic!("{name} is not set and not in .local/env: run `make up` first"))
}

pub fn try_local_env(name: &str) -> Option<String> {
    if let Ok(value) = std::env::var(name) {
        return Some(value);
    }
    let env = std::fs::read_to_string(workspace_root().join(".local/env")).ok()?;
    let prefix = format!("export {name}=");
    env.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .map(|v| v.trim_matches('\'').trim_matches('"').to_owned())
}
