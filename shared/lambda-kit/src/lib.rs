//! Lambda plumbing shared by the four functions: tracing set-up, reading API Gateway HTTP API
//! (payload 2.0) requests, and turning results into responses, with the one function that maps
//! an [`ApiError`] to HTTP.

mod http_api;
mod request_log;
mod routes;
mod telemetry;

pub use aitasks_runtime::error_chain;
pub use http_api::{error_body, error_response, json_response, retry_after_seconds, serve_http, HttpRequest};
pub use request_log::{note_task, note_tenant, route_of};
pub use routes::{check_method, Route};
pub use telemetry::init_tracing;

pub use aitasks_runtime::ApiError;
