//! The dev server as a child process (so a test can SIGKILL it), the stack around it, and an
//! HTTP client for its API.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use reqwest::Method;
use serde_json::Value;
use tokio::process::{Child, Command};

use crate::{dev_token, local_env, StubProvider, TestDb, TestQueues};

fn dev_server_binary() -> PathBuf {
    // The benchmarks run a release build of their own.
    if let Some(binary) = std::env::var_os("AITASK_DEV_SERVER_BIN") {
        return PathBuf::from(binary);
    }
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT.get_or_init(build_dev_server).clone()
}

/// Build the dev server into the target folder this test runs from (test executables live in
/// `target/<profile>/deps`), once per test process, so a test never starts a stale binary. Cargo
/// answers at once when it is up to date.
fn build_dev_server() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>");
    let target_dir = profile_dir.parent().expect("the target folder");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = std::process::Command::new(cargo);
    // What cargo set for this test binary is not the build's: ring's build script reruns when
    // CARGO_MANIFEST_DIR changes, and with it every crate above ring (a minute per test binary).
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name == "CARGO_MANIFEST_DIR"
            || name == "CARGO_MANIFEST_PATH"
            || name.starts_with("CARGO_PKG_")
            || [
                "CARGO_CRATE_NAME",
                "CARGO_BIN_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "OUT_DIR",
            ]
            .contains(&name.as_ref())
        {
            command.env_remove(name.as_ref());
        }
    }
    command.args(["build", "--quiet"]);
    if profile_dir.file_name().is_some_and(|name| name == "release") {
        command.args(["--release", "-p", "aitasks-dev-server"]);
    } else {
        // The selection `make build` makes: `-p aitasks-dev-server` alone resolves its
        // dependencies' features for it alone and compiles some fifty crates a second time (nine
        // CPU minutes on a fresh CI machine); the workspace's selection is up to date already.
        command.args(["--workspace", "--all-targets"]);
    }
    command.arg("--target-dir").arg(target_dir).current_dir(crate::workspace_root());
    let status = command.status().expect("run cargo build for the dev server");
    assert!(status.success(), "building the dev server failed");
    profile_dir.join("aitasks-dev-server")
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// A running dev server process.
pub struct DevServer {
    child: Option<Child>,
    pub address: String,
    pub log: PathBuf,
    env: Vec<(String, String)>,
}

impl DevServer {
    /// Start with exactly these variables (plus PATH and HOME) and wait until it serves.
    pub async fn spawn(env: Vec<(String, String)>) -> DevServer {
        let address = env
            .iter()
            .find(|(k, _)| k == "AITASK_LOCAL_ADDR")
            .map(|(_, v)| v.clone())
            .expect("AITASK_LOCAL_ADDR");
        let log_dir = crate::workspace_root().join("target/e2e-logs");
        std::fs::create_dir_all(&log_dir).expect("log dir");
        let log = log_dir.join(format!("dev-server-{}.log", uuid::Uuid::new_v4().simple()));
        let mut server = DevServer { child: None, address, log, env };
        server.start().await;
        server
    }

    async fn start(&mut self) {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&self.log).expect("log file");
        let mut command = Command::new(dev_server_binary());
        command.env_clear();
        for name in ["PATH", "HOME"] {
            if let Ok(value) = std::env::var(name) {
                command.env(name, value);
            }
        }
        command.envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        command
            .stdout(Stdio::from(log.try_clone().expect("log")))
            .stderr(Stdio::from(log))
            .kill_on_drop(true);
        self.child = Some(command.spawn().expect("start the dev server"));
        let health = format!("http://{}/healthz", self.address);
        let client = reqwest::Client::new();
        let log = self.log.display().to_string();
        let child = self.child.as_mut().expect("just started");
        // Up when it answers (however long a loaded machine takes), failed when it exits.
        crate::wait_until(&format!("the dev server to come up (its log: {log})"), || {
            let exited = child.try_wait().ok().flatten();
            assert!(exited.is_none(), "the dev server exited ({exited:?}) before it served; see {log}");
            let health = client.get(&health).send();
            async move { health.await.is_ok_and(|r| r.status().is_success()) }
        })
        .await;
    }

    /// SIGKILL: no shutdown, no cleanup, like a Lambda instance that vanishes.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }

    /// Change a variable for the next (re)start.
    pub fn set_env(&mut self, key: &str, value: &str) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_owned(), value.to_owned()));
    }

    pub async fn restart(&mut self) {
        self.kill().await;
        self.start().await;
    }

    /// The running process's id.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// Everything the dev server logged so far.
    pub fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Lines logged so far that contain `text`.
    pub fn lines_with(&self, text: &str) -> usize {
        self.logs().lines().filter(|line| line.contains(text)).count()
    }

    /// Wait until `count` lines logged contain `text` (a line is written once what it reports
    /// has happened: a request answered, a task settled).
    pub async fn wait_for_lines(&self, text: &str, count: usize) {
        let what = format!("{count} line(s) logged with {text:?}");
        crate::wait_until(&what, || std::future::ready(self.lines_with(text) >= count)).await;
    }

    /// Sweeps ended so far (each writes one metrics document with `SweepMs`).
    pub fn sweeps(&self) -> usize {
        self.lines_with("\"SweepMs\"")
    }

    /// Wait until `more` sweeps have ended after this call. All but the first of them began
    /// after it: whatever a sweep would do to what is there now, it has had its chance (so a
    /// test can then say that something did not happen).
    pub async fn wait_for_sweeps(&self, more: usize) {
        let target = self.sweeps() + more;
        crate::wait_until(&format!("{more} more sweep(s)"), || std::future::ready(self.sweeps() >= target))
            .await;
    }

    /// The lines logged so far that are JSON objects: log lines and, beside them, the Embedded
    /// Metric Format documents (those with an `_aws` member).
    pub fn json_lines(&self) -> Vec<Value> {
        self.logs().lines().filter_map(|line| serde_json::from_str::<Value>(line).ok()).collect()
    }
}

/// A database, queues, a stub provider and a dev server wired together.
pub struct Stack {
    pub db: TestDb,
    pub queues: TestQueues,
    pub stub: StubProvider,
    pub server: DevServer,
}

/// The API key the stack gives the dev server; it must never show up in logs or answers.
pub const STUB_API_KEY: &str = "sk-stub-secret-key-4f1c";

impl Stack {
    pub async fn start() -> Stack {
        Stack::start_with(&[]).await
    }

    /// Start with some variables overridden (or added).
    pub async fn start_with(overrides: &[(&str, &str)]) -> Stack {
        Stack::start_with_visibility(overrides, 30).await
    }

    /// [`Stack::start_with`] on a task queue with this visibility timeout (a message handed to
    /// a worker that dies, or left for retry, comes back after it).
    pub async fn start_with_visibility(overrides: &[(&str, &str)], visibility_seconds: u32) -> Stack {
        Stack::start_custom(overrides, visibility_seconds, None, None).await
    }

    /// [`Stack::start_with`] with its queues on the SQS-compatible server at `endpoint` (moto's,
    /// whose state machines send to a queue there).
    pub async fn start_with_queues_at(endpoint: &str, overrides: &[(&str, &str)]) -> Stack {
        Stack::start_custom(overrides, 30, None, Some(endpoint)).await
    }

    /// [`Stack::start_with`] whose functions reach Postgres through `proxy` (a test cuts it for
    /// an outage); migrations still go straight to the server.
    pub async fn start_through(overrides: &[(&str, &str)], proxy: &crate::TcpProxy) -> Stack {
        Stack::start_custom(overrides, 30, Some((&proxy.address, false)), None).await
    }

    /// [`Stack::start_through`] without TLS between the functions and Postgres, so that the
    /// proxy can read what goes through it ([`crate::TcpProxy::cut_reply_containing`]).
    pub async fn start_through_in_plaintext(overrides: &[(&str, &str)], proxy: &crate::TcpProxy) -> Stack {
        Stack::start_custom(overrides, 30, Some((&proxy.address, true)), None).await
    }

    async fn start_custom(
        overrides: &[(&str, &str)],
        visibility_seconds: u32,
        db_via: Option<(&str, bool)>,
        queues_at: Option<&str>,
    ) -> Stack {
        let db = TestDb::new().await;
        let queues = match queues_at {
            Some(endpoint) => TestQueues::create_at(endpoint, 3, visibility_seconds).await,
            None => TestQueues::create(3, visibility_seconds).await,
        };
        let stub = StubProvider::start().await;
        let mut env = Stack::env(&db, &queues, &stub, overrides);
        if let Some((address, plaintext)) = db_via {
            let (mut url, _) = crate::via(&db.app_url, address);
            if plaintext {
                url.push_str(if url.contains('?') { "&sslmode=disable" } else { "?sslmode=disable" });
            }
            env.retain(|(k, _)| k != "DATABASE_URL");
            env.push(("DATABASE_URL".into(), url));
        }
        let server = DevServer::spawn(env).await;
        Stack { db, queues, stub, server }
    }

    pub fn env(
        db: &TestDb,
        queues: &TestQueues,
        stub: &StubProvider,
        overrides: &[(&str, &str)],
    ) -> Vec<(String, String)> {
        let address = format!("127.0.0.1:{}", free_port());
        let mut env: Vec<(String, String)> = vec![
            ("DATABASE_URL".into(), db.app_url.clone()),
            ("AITASK_MIGRATE_DATABASE_URL".into(), db.url.clone()),
            ("AITASK_TASK_QUEUE_URL".into(), queues.tasks.clone()),
            ("AITASK_EVENTS_QUEUE_URL".into(), queues.events.clone()),
            ("AWS_ENDPOINT_URL_SQS".into(), queues.endpoint.clone()),
            ("AWS_REGION".into(), "us-east-1".into()),
            ("AWS_ACCESS_KEY_ID".into(), local_env("AWS_ACCESS_KEY_ID")),
            ("AWS_SECRET_ACCESS_KEY".into(), local_env("AWS_SECRET_ACCESS_KEY")),
            ("OPENAI_BASE_URL".into(), stub.base_url.clone()),
            ("OPENAI_API_KEY".into(), STUB_API_KEY.into()),
            ("AITASK_DEFAULT_MODEL".into(), "stub-model".into()),
            ("AITASK_LOCAL_ADDR".into(), address),
            ("AITASK_CANCEL_POLL_MS".into(), "100".into()),
            ("AITASK_HEARTBEAT_MS".into(), "300".into()),
            ("AITASK_STALE_RUNNING_MS".into(), "2000".into()),
            ("AITASK_SWEEP_INTERVAL_MS".into(), "500".into()),
            ("AITASK_UNSENT_GRACE_MS".into(), "500".into()),
            ("AITASK_LOCAL_POLL_WAIT_S".into(), "1".into()),
            ("AITASK_PROVIDER_TIMEOUT_MS".into(), "30000".into()),
            ("AITASK_DB_POOL_SIZE".into(), "8".into()),
            ("RUST_LOG".into(), "info".into()),
        ];
        if let Some(ca) = crate::try_local_env("AITASK_DB_CA_FILE") {
            env.push(("AITASK_DB_CA_FILE".into(), ca));
        }
        for (key, value) in overrides {
            env.retain(|(k, _)| k != key);
            env.push(((*key).to_owned(), (*value).to_owned()));
        }
        env
    }

    /// A client for this stack's API as `app_id`.
    pub fn api(&self, app_id: &str) -> Api {
        Api::new(&self.server.address, dev_token(app_id))
    }
}

/// A JSON client of the HTTP API.
#[derive(Clone)]
pub struct Api {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
}

/// An answer: status, JSON body (`Null` when the body is not JSON), headers.
pub struct Answer {
    pub status: u16,
    pub body: Value,
    pub headers: reqwest::header::HeaderMap,
}

impl Answer {
    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
    }
}

impl Api {
    pub fn new(address: &str, token: String) -> Api {
        Api { base: format!("http://{address}"), token: Some(token), http: reqwest::Client::new() }
    }

    /// The same server with another token (or none).
    pub fn with_token(&self, token: Option<String>) -> Api {
        Api { token, ..self.clone() }
    }

    pub async fn send(&self, method: Method, path: &str, body: Option<Vec<u8>>) -> Answer {
        self.try_send(method, path, body).await.expect("the dev server answers")
    }

    /// [`Api::send`] that reports a server that is not there instead of panicking (for tests
    /// that kill it on purpose).
    pub async fn try_send(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> reqwest::Result<Answer> {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body);
        }
        let response = request.send().await?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.bytes().await?;
        Ok(Answer { status, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null), headers })
    }

    pub async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let answer = self.send(Method::POST, path, Some(body.to_string().into_bytes())).await;
        (answer.status, answer.body)
    }

    /// [`Api::post`] with an `Idempotency-Key` header when `key` is given.
    pub async fn post_keyed(&self, path: &str, key: Option<&str>, body: &Value) -> (u16, Value) {
        let mut request = self.http.post(format!("{}{path}", self.base)).json(body);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        let response = request.send().await.expect("the dev server answers");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        let answer = self.send(Method::GET, path, None).await;
        (answer.status, answer.body)
    }

    pub async fn delete(&self, path: &str) -> (u16, Value) {
        let answer = self.send(Method::DELETE, path, None).await;
        (answer.status, answer.body)
    }

    /// Poll a task until `done` says so, up to [`crate::PATIENCE`]; the last state either way
    /// (the caller's assertion on it says what was expected).
    pub async fn wait_for(&self, task_id: &str, done: impl Fn(&Value) -> bool) -> Value {
        self.wait_within(task_id, crate::PATIENCE, done).await
    }

    /// [`Api::wait_for`] with a patience of its own (a task on the local model may take minutes).
    pub async fn wait_within(
        &self,
        task_id: &str,
        patience: Duration,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let until = tokio::time::Instant::now() + patience;
        loop {
            let (status, task) = self.get(&format!("/v1/tasks/{task_id}")).await;
            assert_eq!(status, 200, "reading task {task_id}: {task}");
            if done(&task) || tokio::time::Instant::now() >= until {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Poll until the task is terminal.
    pub async fn wait_terminal(&self, task_id: &str) -> Value {
        self.wait_for(task_id, |t| matches!(t["status"].as_str(), Some("succeeded" | "failed" | "canceled")))
            .await
    }
}
