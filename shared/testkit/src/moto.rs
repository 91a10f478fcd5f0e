//! moto's server (installed by `scripts/tools.sh`, the rehearsal's local Secrets Manager too),
//! started once per test process on a free port: Step Functions that run their state machines
//! (`{"stepfunctions": {"execute_state_machine": true}}`, so a `.waitForTaskToken` state waits
//! for a real `SendTaskSuccess`), SQS, and EventBridge with rules that deliver to SQS. Every
//! test names its own resources, so they share it. It stops when the test process does.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use aws_config::{BehaviorVersion, SdkConfig};
use aws_sdk_sqs::config::{Credentials, Region};

/// moto's endpoint, `http://127.0.0.1:<port>`.
pub struct Moto {
    pub endpoint: String,
    /// The shell that runs moto and stops it with this process (it lives as long as the process).
    _watcher: std::process::Child,
}

impl Moto {
    /// The process's moto, started on first use (a few seconds) and ready to run state machines.
    pub async fn shared() -> &'static Moto {
        static MOTO: OnceLock<Moto> = OnceLock::new();
        // Starting is a spawn (no wait): every test then waits for it to answer.
        let moto = MOTO.get_or_init(start);
        wait_until_up(&moto.endpoint).await;
        moto
    }

    /// An SDK configuration for moto: its endpoint, us-east-1, dummy credentials.
    pub async fn sdk_config(&self) -> SdkConfig {
        local_sdk_config(&self.endpoint).await
    }

    /// The variables that point a function's SDK clients at moto.
    pub fn env(&self, services: &[&str]) -> Vec<(String, String)> {
        services
            .iter()
            .map(|service| (format!("AWS_ENDPOINT_URL_{service}"), self.endpoint.clone()))
            .collect()
    }
}

fn tools_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("AITASK_TOOLS_BIN") {
        return PathBuf::from(bin);
    }
    let out = Command::new(crate::workspace_root().join("scripts/tools.sh"))
        .output()
        .expect("run scripts/tools.sh");
    assert!(out.status.success(), "scripts/tools.sh failed: {}", String::from_utf8_lossy(&out.stderr));
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// Start moto under a shell that stops it when this test process exits (a static's child would
/// otherwise outlive the tests).
fn start() -> Moto {
    let port = crate::dev_server::free_port();
    let moto_server = tools_bin().join("moto_server");
    let log_dir = crate::workspace_root().join("target/e2e-logs");
    std::fs::create_dir_all(&log_dir).expect("log dir");
    let log = log_dir.join(format!("moto-{port}.log"));
    let watcher = format!(
        "'{}' -H 127.0.0.1 -p {port} >>'{}' 2>&1 & moto=$!; \
         while kill -0 {parent} 2>/dev/null && kill -0 $moto 2>/dev/null; do sleep 1; done; kill $moto 2>/dev/null",
        moto_server.display(),
        log.display(),
        parent = std::process::id()
    );
    let watcher = Command::new("sh")
        .args(["-c", &watcher])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start moto_server (scripts/tools.sh installs it)");
    Moto { endpoint: format!("http://127.0.0.1:{port}"), _watcher: watcher }
}

/// Until moto answers (a Python server: a loaded machine takes a while to start it).
async fn wait_until_up(endpoint: &str) {
    let http = reqwest::Client::new();
    let config = format!("{endpoint}/moto-api/config");
    crate::wait_until(&format!("moto to come up on {endpoint}"), || {
        let body = serde_json::json!({"stepfunctions": {"execute_state_machine": true}});
        let sent = http.post(&config).json(&body).send();
        async move { sent.await.is_ok_and(|r| r.status().is_success()) }
    })
    .await;
}

/// An SDK configuration whose clients call a local stand-in at `endpoint`: us-east-1, dummy
/// credentials, the functions' own HTTPS client.
pub(crate) async fn local_sdk_config(endpoint: &str) -> SdkConfig {
    aws_config::defaults(BehaviorVersion::latest())
        .http_client(aitasks_runtime::aws::https_client())
        .region(Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .credentials_provider(Credentials::new("test", "test", None, None, "testkit"))
        .load()
        .await
}
