//! Test support for aitasks. Everything here is real: a Postgres database per test, SQS queues
//! on the SQS-compatible server, an HTTP server speaking the OpenAI chat-completions wire
//! format, HS256 tokens, and the dev server as a child process; moto's server (Step Functions,
//! SQS, EventBridge) and a stub of Lambda's durable-callback API that checks SigV4.
//!
//! Tests need `make services` (or `make up`) to have run (Postgres and the SQS-compatible server); the locations
//! are read from the environment or, failing that, from `.local/env`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod app_env;
mod db;
mod db_activity;
mod dev_server;
mod durable_stub;
mod heartbeat_scale;
mod moto;
mod private_sqs;
mod queues;
mod random;
pub mod runtime_api;
mod served_heartbeats;
mod sfn_stub;
mod sigv4;
mod stats;
mod stub_batches;
mod stub_provider;
mod tcp_proxy;
mod tokens;
mod wait;

use std::path::PathBuf;

pub use app_env::{app_env, test_app};
pub use db::*;
pub use dev_server::{Answer, Api, DevServer, Stack, STUB_API_KEY};
pub use durable_stub::{DurableCall, DurableStub, DURABLE_ACCESS_KEY, DURABLE_SECRET_KEY};
pub use heartbeat_scale::{run_heartbeat_scale, HeartbeatFigures, HeartbeatScale};
pub use moto::Moto;
pub use private_sqs::PrivateSqs;
pub use queues::{sqs_at, TestQueues};
pub use random::Xorshift;
pub use served_heartbeats::{run_served_heartbeats, ServedHeartbeats};
pub use sfn_stub::{gaps_between_heartbeats, longest_gaps, Quota, SfnCall, SfnStub};
pub use stats::percentile;
pub use stub_batches::{
    BatchOutcome, BedrockBatchStub, LineScript, StubBatches, BATCH_AWS_ACCESS_KEY, BATCH_AWS_SECRET_KEY,
    BATCH_STUB_KEY,
};
pub use stub_provider::{epoch_micros, stamps_in, Reply, StubProvider};
pub use tcp_proxy::{via, TcpProxy};
pub use tokens::{dev_token, token_with, DEV_SECRET};
pub use wait::{wait_for, wait_until, PATIENCE};

/// The repository root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A variable from the environment, or from `.local/env` (written by `make up`).
pub fn local_env(name: &str) -> String {
    try_local_env(name)
        .unwrap_or_else(|| panic!("{name} is not set and not in .local/env: run `make up` first"))
}

/// The same rule as `scripts/env.sh` (the one way `.local/env` is read): the environment wins,
/// else the file's `export KEY='value'` line; `AITASK_ENV_FILE` names another file.
pub fn try_local_env(name: &str) -> Option<String> {
    if let Ok(value) = std::env::var(name) {
        return Some(value);
    }
    let file = std::env::var_os("AITASK_ENV_FILE")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(".local/env"));
    let env = std::fs::read_to_string(file).ok()?;
    let prefix = format!("export {name}=");
    env.lines().find_map(|line| line.strip_prefix(&prefix)).map(shell_unquote)
}

/// A value as the shell reads it: single-quoted runs verbatim, elsewhere a backslash escapes the
/// next character (`env_set` writes `'it'\''s'`; older files used `printf %q`).
fn shell_unquote(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => out.extend(chars.by_ref().take_while(|c| *c != '\'')),
            '\\' => out.extend(chars.next()),
            '"' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::shell_unquote;

    #[test]
    fn values_unquote_as_the_shell_does() {
        assert_eq!(shell_unquote("'postgres://a:b@h:1/x?s=1'"), "postgres://a:b@h:1/x?s=1");
        assert_eq!(shell_unquote("'it'\\''s'"), "it's");
        assert_eq!(shell_unquote("plain\\ value"), "plain value");
    }
}
