//! What can go wrong in a call: the API's own refusals (with its code), and everything around
//! them (the network, a body this client cannot read, its own configuration).

use std::fmt;

use aitasks_contracts::{ErrorCode, Operation, Problem, Problems};

use crate::answers::Task;

/// An error answer of the API (docs/api.md, "Errors"): its HTTP status and its stable `code`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiError {
    /// The HTTP status (4xx or 5xx).
    pub status: u16,
    /// The stable code, such as `INVALID_REQUEST` or `WORKFLOW_AI_RATE_LIMIT`.
    pub code: String,
    pub message: String,
    /// An invalid request's problems, each with its JSON path (at most 50).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<Problem>,
    /// Problems found beyond those in `details`.
    pub more_problems: Option<u64>,
    /// `Retry-After` (or a batch item's `retryAfter`), in whole seconds.
    pub retry_after: Option<u64>,
    /// The gateway's id of the request (`apigw-requestid`), to quote to an operator.
    pub request_id: Option<String>,
}

impl ApiError {
    /// The code as the contract's type; `None` for a code this client does not know (a newer
    /// server's).
    pub fn error_code(&self) -> Option<ErrorCode> {
        ErrorCode::parse(&self.code)
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (HTTP {}): {}", self.code, self.status, self.message)?;
        for problem in &self.details {
            write!(f, "; {}: {}", problem.path, problem.message)?;
        }
        if let Some(more) = self.more_problems {
            write!(f, "; and {more} more problems")?;
        }
        if let Some(id) = &self.request_id {
            write!(f, " [request {id}]")?;
        }
        Ok(())
    }
}

/// Every error of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The API refused the request (after any retries the policy allowed).
    #[error("{0}")]
    Api(Box<ApiError>),
    /// No answer: the server could not be reached, or the connection failed or timed out.
    #[error("no answer from {url}: {source}")]
    Transport {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    /// A redirect (3xx): the API never redirects, so the base URL names something else (an
    /// `http://` URL of an HTTPS-only host, a login page). Not followed and not retried: nothing
    /// was sent to `location`.
    #[error(
        "HTTP {status}: a redirect{}; the API never redirects, so it was not followed (check the base URL)",
        .location.as_deref().map(|l| format!(" to {l}")).unwrap_or_default()
    )]
    Redirect { status: u16, location: Option<String>, request_id: Option<String> },
    /// An answer that is not the documented one (a proxy's error page, a server of another
    /// version).
    #[error("HTTP {status} with a body this client cannot read: {reason}")]
    UnexpectedAnswer { status: u16, reason: String, request_id: Option<String> },
    /// A bad base URL, token or setting, found before anything was sent.
    #[error("invalid setting: {0}")]
    Config(String),
    /// The token provider gave no token.
    #[error("no token: {0}")]
    Token(String),
    /// A create body that breaks the contract, found before anything was sent.
    #[error("INVALID_REQUEST: {0}")]
    InvalidBody(Problems),
    /// [`crate::Client::wait`] reached its deadline before the task ended: the task as last read.
    #[error("task {} is still {} at the wait's deadline", .0.id, .0.status)]
    WaitDeadline(Box<Task>),
    /// [`crate::Client::wait_operation`] reached its deadline while the operation was still
    /// running: the operation as last read.
    #[error("operation {} is still {} at the wait's deadline", .0.id, .0.state.as_str())]
    OperationDeadline(Box<Operation>),
}

impl Error {
    /// The API's error, when the API answered with one.
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Error::Api(error) => Some(error),
            _ => None,
        }
    }

    /// The HTTP status of the answer, when there was one.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Api(error) => Some(error.status),
            Error::UnexpectedAnswer { status, .. } | Error::Redirect { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The API's code (`INVALID_REQUEST` for a body refused before sending, as the API would).
    pub fn code(&self) -> Option<&str> {
        match self {
            Error::Api(error) => Some(&error.code),
            Error::InvalidBody(_) => Some(ErrorCode::InvalidRequest.as_str()),
            _ => None,
        }
    }

    /// The gateway's id of the request that failed, when the answer carried one.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Error::Api(error) => error.request_id.as_deref(),
            Error::UnexpectedAnswer { request_id, .. } | Error::Redirect { request_id, .. } => {
                request_id.as_deref()
            }
            _ => None,
        }
    }
}
