//! Why a command failed, and the exit status that says so (the `Cli` help lists them).

use std::process::ExitCode;

use aitasks_client::Error;
use serde_json::{json, Value};

/// A command's failure.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Failure {
    /// The client's error: the API's refusal, or no usable answer.
    #[error("{0}")]
    Client(#[from] Error),
    /// Bad input or settings; nothing was sent.
    #[error("{0}")]
    Input(String),
    /// Bad lines of a batch file (already reported); nothing was sent.
    #[error("{0}")]
    Lines(String),
    /// Items a batch's API answered with a refusal (already reported).
    #[error("{0} items were refused")]
    Refused(usize),
    /// The task ended, but not `succeeded`, or a followed operation ended `stopped` (already
    /// printed).
    #[error("{0}")]
    Ended(String),
    /// `--timeout` passed first.
    #[error("{0}")]
    Timeout(String),
}

impl Failure {
    pub(crate) fn exit_code(&self) -> ExitCode {
        ExitCode::from(match self {
            Failure::Client(Error::Api(_)) | Failure::Refused(_) | Failure::Ended(_) => 1,
            Failure::Client(Error::InvalidBody(_) | Error::Config(_) | Error::Token(_))
            | Failure::Input(_)
            | Failure::Lines(_) => 2,
            Failure::Client(Error::WaitDeadline(_) | Error::OperationDeadline(_)) | Failure::Timeout(_) => 4,
            Failure::Client(_) => 3,
        })
    }

    /// The failure as `--json` prints it: `{"error": {status?, code?, message, ...}}`.
    pub(crate) fn to_json(&self) -> Value {
        match self {
            Failure::Client(Error::Api(api)) => json!({"error": api}),
            Failure::Client(Error::WaitDeadline(task)) => {
                json!({"error": {"code": "TIMEOUT", "message": self.to_string()}, "task": task})
            }
            Failure::Client(Error::OperationDeadline(operation)) => {
                json!({"error": {"code": "TIMEOUT", "message": self.to_string()}, "operation": operation})
            }
            Failure::Client(error) => json!({"error": {
                "status": error.status(),
                "code": error.code().unwrap_or(self.local_code()),
                "message": error.to_string(),
                "requestId": error.request_id(),
            }}),
            _ => json!({"error": {"code": self.local_code(), "message": self.to_string()}}),
        }
    }

    /// A code for failures the API did not answer.
    fn local_code(&self) -> &'static str {
        match self {
            Failure::Input(_) => "INVALID_INPUT",
            Failure::Lines(_) => "INVALID_REQUEST",
            Failure::Timeout(_) | Failure::Client(Error::WaitDeadline(_) | Error::OperationDeadline(_)) => {
                "TIMEOUT"
            }
            Failure::Refused(_) => "REFUSED",
            Failure::Ended(_) => "TASK_NOT_SUCCEEDED",
            Failure::Client(Error::Transport { .. }) => "UNREACHABLE",
            Failure::Client(Error::Redirect { .. }) => "UNEXPECTED_REDIRECT",
            Failure::Client(_) => "UNEXPECTED_ANSWER",
        }
    }
}
