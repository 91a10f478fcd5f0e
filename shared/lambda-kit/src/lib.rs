//! Lambda plumbing shared by the functions that serve the runtime: tracing set-up (from
//! `aitasks_telemetry`), the protocol adapters (API Gateway HTTP API requests and responses,
//! payload 2.0, with the one function that maps an [`ApiError`] to HTTP; SQS batch answers), and
//! the routes each HTTP function serves. CloudFormation's custom-resource answers live in the one
//! function that gives them, `migrate`.

mod http_api;
mod many_answer;
mod request_log;
mod routes;

pub use aitasks_telemetry::{error_chain, init_tracing};
pub use http_api::{error_body, error_response, json_response, retry_after_seconds, serve_http, HttpRequest};
pub use many_answer::many_response;
pub use request_log::{note_task, note_tenant, route_of};
pub use routes::{check_method, Route};

pub use aitasks_runtime::ApiError;
