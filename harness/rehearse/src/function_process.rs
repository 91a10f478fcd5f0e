//! One function's release binary, running as Lambda runs it: its own process, the environment
//! the template gives it plus the variables Lambda itself sets (the Runtime API, the role's
//! credentials, the log format and level from `LoggingConfig`), and nothing from this shell.
//! The only local additions are the AWS endpoints (`AWS_ENDPOINT_URL_SQS`,
//! `AWS_ENDPOINT_URL_SECRETS_MANAGER`), which point at the recording proxy.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use aitasks_testkit::runtime_api::{Answer, InvokeError, RuntimeApi};
use serde_json::Value;

use crate::deployment::Function;
use crate::local_aws::REGION;
use crate::Failure;

/// The credentials Lambda would hand this function (its role's session).
#[derive(Debug, Clone)]
pub struct RoleCredentials {
    pub access_key: String,
    pub secret_key: String,
    pub session_token: String,
}

impl RoleCredentials {
    pub fn for_function(index: usize, logical_id: &str) -> RoleCredentials {
        RoleCredentials {
            access_key: format!("ASIAREHEARSAL{index:07}"),
            secret_key: format!("rehearsal-secret-{index}"),
            session_token: format!("rehearsal-session-{logical_id}"),
        }
    }
}

/// What Lambda sets for every function, besides the template's variables.
pub fn lambda_environment(
    function: &Function,
    runtime_api: &str,
    credentials: &RoleCredentials,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = [
        ("AWS_LAMBDA_RUNTIME_API", runtime_api.to_owned()),
        ("AWS_LAMBDA_FUNCTION_NAME", function.name.clone()),
        ("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST".to_owned()),
        ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", function.memory_mb.to_string()),
        ("AWS_LAMBDA_LOG_GROUP_NAME", format!("/aws/lambda/{}", function.name)),
        ("AWS_LAMBDA_LOG_STREAM_NAME", "2026/01/01/[$LATEST]rehearsal".to_owned()),
        ("AWS_LAMBDA_INITIALIZATION_TYPE", "on-demand".to_owned()),
        ("AWS_REGION", REGION.to_owned()),
        ("AWS_DEFAULT_REGION", REGION.to_owned()),
        ("AWS_ACCESS_KEY_ID", credentials.access_key.clone()),
        ("AWS_SECRET_ACCESS_KEY", credentials.secret_key.clone()),
        ("AWS_SESSION_TOKEN", credentials.session_token.clone()),
        ("LAMBDA_TASK_ROOT", "/var/task".to_owned()),
        ("LAMBDA_RUNTIME_DIR", "/var/runtime".to_owned()),
        ("_HANDLER", "bootstrap".to_owned()),
        ("TZ", ":UTC".to_owned()),
        ("LANG", "en_US.UTF-8".to_owned()),
        ("PATH", "/usr/local/bin:/usr/bin/:/bin:/opt/bin".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    if let Some(format) = &function.log_format {
        env.insert("AWS_LAMBDA_LOG_FORMAT".into(), format.clone());
    }
    if let Some(level) = &function.application_log_level {
        env.insert("AWS_LAMBDA_LOG_LEVEL".into(), level.clone());
    }
    if function.tracing.as_deref() == Some("Active") {
        env.insert("AWS_XRAY_DAEMON_ADDRESS".into(), "127.0.0.1:2000".into());
        env.insert("AWS_XRAY_CONTEXT_MISSING".into(), "LOG_ERROR".into());
    }
    env
}

/// A running function process.
pub struct FunctionProcess {
    pub logical_id: String,
    pub timeout: Duration,
    pub log: PathBuf,
    /// From process start to its first request for an invocation.
    pub cold_start: Option<Duration>,
    runtime: RuntimeApi,
    child: tokio::process::Child,
}

/// How an invocation went.
#[derive(Debug, Clone, PartialEq)]
pub enum Invocation {
    Answered(Answer),
    /// The process reported a start-up failure, timed out, or exited.
    Failed(String),
}

impl FunctionProcess {
    /// Start the binary and wait for its cold start to end (its first `next`, or a reported
    /// start-up failure).
    pub async fn start(
        function: &Function,
        binary: &Path,
        template_environment: &BTreeMap<String, String>,
        credentials: &RoleCredentials,
        endpoints: &BTreeMap<String, String>,
        log: PathBuf,
    ) -> Result<FunctionProcess, Failure> {
        if !binary.exists() {
            return Err(format!(
                "{} is missing: build it with `cargo lambda build --release` (make lambda-smoke)",
                binary.display()
            )
            .into());
        }
        let runtime = RuntimeApi::start(&function.arn).await?;
        let mut env = template_environment.clone();
        env.extend(lambda_environment(function, &runtime.address, credentials));
        env.extend(endpoints.clone());
        let file = std::fs::File::create(&log)?;
        let started = Instant::now();
        let mut child = tokio::process::Command::new(binary)
            .env_clear()
            .envs(&env)
            .current_dir(binary.parent().unwrap_or(Path::new("/")))
            .stdin(Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file)
            .kill_on_drop(true)
            .spawn()?;
        let timeout = Duration::from_secs(function.timeout_seconds.max(1));
        // Lambda gives a cold start 10 s before it counts as a failed init.
        tokio::select! {
            _ = runtime.wait_started(Duration::from_secs(10)) => {}
            status = child.wait() => {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                let last = text.lines().last().unwrap_or_default().to_owned();
                let code = status.ok().and_then(|s| s.code()).map(|c| c.to_string()).unwrap_or_else(|| "a signal".into());
                return Err(format!("exited with {code} during its cold start (Lambda: Runtime.ExitError): {last}").into());
            }
        }
        let cold_start = runtime.ready_at().map(|ready| ready - started);
        Ok(FunctionProcess {
            logical_id: function.logical_id.clone(),
            timeout,
            log,
            cold_start,
            runtime,
            child,
        })
    }

    /// The start-up failure the process reported, if any.
    pub fn init_error(&self) -> Option<Value> {
        self.runtime.init_error()
    }

    /// Invoke with one event, within the function's timeout.
    pub async fn invoke(&mut self, event: Value) -> Invocation {
        self.invoke_within(event, self.timeout).await
    }

    /// Invoke with a deadline other than the function's timeout.
    pub async fn invoke_within(&mut self, event: Value, timeout: Duration) -> Invocation {
        tokio::select! {
            answer = self.runtime.invoke(event, timeout) => match answer {
                Ok(answer) => Invocation::Answered(answer),
                Err(InvokeError::Init(error)) => Invocation::Failed(format!("init error: {error}")),
                Err(error) => Invocation::Failed(error.to_string()),
            },
            status = self.child.wait() => Invocation::Failed(format!("the process exited: {status:?}")),
        }
    }

    /// The last lines the function logged.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}
