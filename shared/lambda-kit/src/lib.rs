//! Lambda plumbing shared by the functions: tracing set-up, the protocol adapters (API Gateway
//! HTTP API requests and responses, payload 2.0, with the one function that maps an
//! [`ApiError`] to HTTP; CloudFormation's custom-resource answers, panic included), and the
//! routes each HTTP function serves.

mod custom_resource;
mod http_api;
mod many_answer;
mod request_log;
mod routes;
mod telemetry;

pub use aitasks_runtime::error_chain;
pub use custom_resource::{
    arm_panic_answer, install_panic_answer, Armed, CustomResourceRequest, ResponseStatus,
};
pub use http_api::{error_body, error_response, json_response, retry_after_seconds, serve_http, HttpRequest};
pub use many_answer::many_response;
pub use request_log::{note_task, note_tenant, route_of};
pub use routes::{check_method, Route};
pub use telemetry::init_tracing;

pub use aitasks_runtime::ApiError;
