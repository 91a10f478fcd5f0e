//! The local stand-ins for the AWS resources the stack creates or is given: Secrets Manager and
//! S3 (moto's server, which speaks the real wire formats), the queues on the SQS-compatible server,
//! the secrets the parameters name, and an endpoint that takes CloudFormation's custom-resource
//! responses the way a pre-signed S3 URL does.

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_config::BehaviorVersion;
use aws_sdk_sqs::config::{Credentials, Region};
use aws_sdk_sqs::types::QueueAttributeName;
use axum::extract::{Path as UrlPath, State};
use axum::routing::put;
use serde_json::{json, Value};

use crate::Failure;

pub const REGION: &str = "us-east-1";

async fn sdk_config(endpoint: &str) -> aws_config::SdkConfig {
    aws_config::defaults(BehaviorVersion::latest())
        .http_client(aitasks_runtime::aws::https_client())
        .region(Region::new(REGION))
        .endpoint_url(endpoint)
        .credentials_provider(Credentials::new("rehearsal-admin", "rehearsal-admin", None, None, "rehearsal"))
        .load()
        .await
}

/// moto's server, serving Secrets Manager on a loopback port for as long as this lives.
pub struct SecretsManager {
    pub endpoint: String,
    pub client: aws_sdk_secretsmanager::Client,
    _process: tokio::process::Child,
}

impl SecretsManager {
    /// Start `moto_server` from the tools folder (`scripts/tools.sh` installs it).
    pub async fn start(tools_bin: &Path, log: &Path) -> Result<SecretsManager, Failure> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let log = std::fs::File::create(log)?;
        let process = tokio::process::Command::new(tools_bin.join("moto_server"))
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(log.try_clone()?)
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                format!("cannot start {}/moto_server ({e}); run scripts/tools.sh", tools_bin.display())
            })?;
        let endpoint = format!("http://127.0.0.1:{port}");
        let client = aws_sdk_secretsmanager::Client::new(&sdk_config(&endpoint).await);
        for _ in 0..300 {
            if client.list_secrets().send().await.is_ok() {
                return Ok(SecretsManager { endpoint, client, _process: process });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err("moto's Secrets Manager did not come up within 15 s".into())
    }

    /// Create a secret; its ARN (with the random suffix AWS adds).
    pub async fn create(&self, name: &str, value: &str) -> Result<String, Failure> {
        let created = self.client.create_secret().name(name).secret_string(value).send().await?;
        Ok(created.arn().ok_or("CreateSecret returned no ARN")?.to_owned())
    }
}

/// Create a bucket in moto's S3 (the same server as its Secrets Manager: moto tells the
/// services apart by the credential scope a request is signed for, which it does not verify).
pub async fn create_bucket(moto_endpoint: &str, name: &str) -> Result<(), Failure> {
    let date = chrono::Utc::now().format("%Y%m%d");
    let answer = reqwest::Client::new()
        .put(format!("{}/{name}", moto_endpoint.trim_end_matches('/')))
        .header(
            "authorization",
            format!("AWS4-HMAC-SHA256 Credential=rehearsal-admin/{date}/{REGION}/s3/aws4_request, SignedHeaders=host, Signature=0"),
        )
        .send()
        .await?;
    if !answer.status().is_success() {
        return Err(format!("moto's S3 refused to create bucket {name}: {}", answer.status()).into());
    }
    Ok(())
}

/// An RDS-style secret (username, password, host, port, dbname) for a Postgres URL.
pub fn rds_secret(url: &str, database: &str) -> Result<String, Failure> {
    let config = tokio_postgres::Config::from_str(url)?;
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        _ => return Err(format!("{} has no TCP host", aitasks_store::redact(url)).into()),
    };
    let password = config
        .get_password()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        // The local owner logs in with trust authentication: any password does.
        .unwrap_or_else(|| "unused-with-trust-authentication".to_owned());
    Ok(json!({
        "engine": "postgres",
        "username": config.get_user().ok_or("no user in the database URL")?,
        "password": password,
        "host": host,
        "port": config.get_ports().first().copied().unwrap_or(5432),
        "dbname": database,
    })
    .to_string())
}

/// A queue of the stack on the SQS-compatible server.
#[derive(Debug, Clone)]
pub struct LocalQueue {
    pub name: String,
    pub url: String,
    pub arn: String,
}

/// The SQS-compatible server, spoken to directly (not as any function).
pub struct Queues {
    pub client: aws_sdk_sqs::Client,
}

impl Queues {
    pub async fn connect(endpoint: &str) -> Queues {
        Queues { client: aws_sdk_sqs::Client::new(&sdk_config(endpoint).await) }
    }

    pub async fn create(&self, name: &str) -> Result<LocalQueue, Failure> {
        let created = self.client.create_queue().queue_name(name).send().await?;
        let url = created.queue_url().ok_or("CreateQueue returned no URL")?.to_owned();
        let attributes = self
            .client
            .get_queue_attributes()
            .queue_url(&url)
            .attribute_names(QueueAttributeName::QueueArn)
            .send()
            .await?;
        let arn = attributes
            .attributes()
            .and_then(|a| a.get(&QueueAttributeName::QueueArn))
            .ok_or("GetQueueAttributes returned no QueueArn")?
            .clone();
        Ok(LocalQueue { name: name.to_owned(), url, arn })
    }

    /// Give a queue the attributes its template resource has (the ones SQS has).
    pub async fn configure(
        &self,
        queue: &LocalQueue,
        attributes: &BTreeMap<String, String>,
    ) -> Result<(), Failure> {
        let mut request = self.client.set_queue_attributes().queue_url(&queue.url);
        let mut any = false;
        for (name, value) in attributes {
            if matches!(
                name.as_str(),
                "VisibilityTimeout"
                    | "MessageRetentionPeriod"
                    | "RedrivePolicy"
                    | "DelaySeconds"
                    | "ReceiveMessageWaitTimeSeconds"
                    | "MaximumMessageSize"
            ) {
                request = request.attributes(QueueAttributeName::from(name.as_str()), value);
                any = true;
            }
        }
        if any {
            request.send().await.map_err(|e| format!("SetQueueAttributes on {}: {e:?}", queue.name))?;
        }
        Ok(())
    }

    /// Everything on a queue within `wait` (received and deleted).
    pub async fn drain(&self, url: &str, wait: Duration) -> Result<Vec<String>, Failure> {
        let until = tokio::time::Instant::now() + wait;
        let mut bodies = Vec::new();
        while tokio::time::Instant::now() < until {
            let out = self
                .client
                .receive_message()
                .queue_url(url)
                .max_number_of_messages(10)
                .wait_time_seconds(1)
                .send()
                .await?;
            for message in out.messages() {
                bodies.push(message.body().unwrap_or_default().to_owned());
                if let Some(receipt) = message.receipt_handle() {
                    self.client.delete_message().queue_url(url).receipt_handle(receipt).send().await?;
                }
            }
        }
        Ok(bodies)
    }
}

/// Where CloudFormation's custom-resource responses go: a `PUT` to a pre-signed URL.
pub struct ResponseBucket {
    pub base: String,
    received: Arc<Mutex<BTreeMap<String, Value>>>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for ResponseBucket {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn receive(
    State(received): State<Arc<Mutex<BTreeMap<String, Value>>>>,
    UrlPath(key): UrlPath<String>,
    body: String,
) -> &'static str {
    let value = serde_json::from_str(&body).unwrap_or(Value::String(body));
    received.lock().unwrap_or_else(|p| p.into_inner()).insert(key, value);
    ""
}

impl ResponseBucket {
    pub async fn start() -> Result<ResponseBucket, Failure> {
        let received: Arc<Mutex<BTreeMap<String, Value>>> = Arc::default();
        let router =
            axum::Router::new().route("/cfn-responses/{key}", put(receive)).with_state(received.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Ok(ResponseBucket { base, received, server })
    }

    /// A new pre-signed-style URL and its key.
    pub fn presigned_url(&self) -> (String, String) {
        let key = uuid::Uuid::new_v4().simple().to_string();
        let url = format!(
            "{}/cfn-responses/{key}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=7200&X-Amz-Signature=rehearsal",
            self.base
        );
        (url, key)
    }

    /// The response PUT to `key`, if any.
    pub fn response(&self, key: &str) -> Option<Value> {
        self.received.lock().unwrap_or_else(|p| p.into_inner()).get(key).cloned()
    }
}
