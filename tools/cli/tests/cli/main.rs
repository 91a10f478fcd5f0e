//! `aitasks`, the built binary, run as a process against the dev server (Postgres, the
//! SQS-compatible server and the stub provider behind it): every subcommand, its `--json`
//! output parsed, a 5,000-line batch, and bad input refused with the API's code and a non-zero
//! exit, with nothing created; replays, operations and holds; and what `runs get`, `tail` and
//! `batch` draw on a pseudo-terminal (`terminal`). Each test starts a stack of its own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod acting;
mod bad_input;
mod bulk_load;
mod dropped_commit;
mod follow;
mod history;
mod hostile_text;
mod library;
mod on_terminal;
mod settings;
mod tasks;
mod terminal;

use std::path::PathBuf;

use aitasks_testkit::Stack;
use serde_json::Value;

/// A finished `aitasks` process.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Standard output as one JSON document.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", self.stdout, self.stderr))
    }

    /// Standard output as JSON lines.
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
    }

    #[track_caller]
    pub fn ok(self) -> Run {
        assert_eq!(self.code, 0, "exit status\nstdout: {}\nstderr: {}", self.stdout, self.stderr);
        self
    }
}

/// A folder of its own under cargo's temporary folder for tests.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-{name}-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `aitasks` with these variables (`AITASKS_URL`, `AITASKS_TOKEN`, ...) and arguments; HOME is
/// an empty folder, so no config file of the machine's user is read.
fn command(env: &[(&str, &str)], args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_aitasks"));
    command.env_clear();
    if let Ok(path) = std::env::var("PATH") {
        command.env("PATH", path);
    }
    command.env("HOME", scratch("home"));
    command.envs(env.iter().copied()).args(args);
    command
}

/// Run `aitasks` with these variables and arguments (see [`command`]) to its end.
pub async fn aitasks_with(env: &[(&str, &str)], args: &[&str]) -> Run {
    let output = command(env, args).output().await.expect("run aitasks");
    Run {
        code: output.status.code().expect("exited, not killed"),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// Run `aitasks` against the stack with this token.
pub async fn aitasks(stack: &Stack, token: &str, args: &[&str]) -> Run {
    let url = format!("http://{}", stack.server.address);
    aitasks_with(&[("AITASKS_URL", &url), ("AITASKS_TOKEN", token)], args).await
}

/// Start `aitasks` against the stack with this token, its output piped, to read it while it
/// runs (a command that follows something until it ends).
pub fn aitasks_started(stack: &Stack, token: &str, args: &[&str]) -> tokio::process::Child {
    let url = format!("http://{}", stack.server.address);
    command(&[("AITASKS_URL", &url), ("AITASKS_TOKEN", token)], args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start aitasks")
}

/// A classify create body owned by a scope.
pub fn classify_body(scope: &str, effect_key: &str) -> Value {
    serde_json::json!({
        "owner": {"scopeId": scope}, "stepKey": "label", "effectKey": effect_key, "modelId": "default",
        "request": {"kind": "classify", "prompt": "Sentiment of the text?", "input": {"text": effect_key},
                    "choices": ["pos", "neg"]}
    })
}
