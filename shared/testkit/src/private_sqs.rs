//! An SQS-compatible server of a test's own (the same fauxqs build `make up` runs), for tests
//! that kill it: the shared one serves every other test.

use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

use crate::dev_server::free_port;
use crate::local_env;

pub struct PrivateSqs {
    child: Option<Child>,
    pub port: u16,
    pub endpoint: String,
}

impl PrivateSqs {
    pub async fn start() -> PrivateSqs {
        let port = free_port();
        let mut sqs = PrivateSqs { child: None, port, endpoint: format!("http://127.0.0.1:{port}") };
        sqs.run().await;
        sqs
    }

    async fn run(&mut self) {
        let child = Command::new("node")
            .arg(local_env("AITASK_FAUXQS_CLI"))
            .env("FAUXQS_PORT", self.port.to_string())
            .env("FAUXQS_LOGGER", "false")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start fauxqs (make up installs it)");
        self.child = Some(child);
        let client = reqwest::Client::new();
        for _ in 0..200 {
            let answered = client
                .post(format!("{}/", self.endpoint))
                .header("X-Amz-Target", "AmazonSQS.ListQueues")
                .header("Content-Type", "application/x-amz-json-1.0")
                .body("{}")
                .send()
                .await;
            if answered.is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("fauxqs did not come up on {}", self.endpoint);
    }

    /// SIGKILL: every message it held is gone.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }

    /// Start again on the same port, empty.
    pub async fn restart(&mut self) {
        self.kill().await;
        self.run().await;
    }
}
