//! What the Lambda runtime gives every invocation, as the dev server hosts it: a request id, and
//! the span the runtime opens (`requestId` on every line). When traces are exported
//! (`AWS_XRAY_DAEMON_ADDRESS`), a new trace header too, as Lambda starts one per invocation of
//! a function with active tracing.

use aitasks_runtime::xray::{self, TraceContext};
use lambda_runtime::Context;

/// A fresh invocation context and its span.
pub(crate) fn start(context: &mut Context) -> tracing::Span {
    context.request_id = uuid::Uuid::new_v4().to_string();
    if !xray::enabled() {
        return tracing::info_span!("Lambda runtime invoke", requestId = %context.request_id);
    }
    let header = TraceContext::new_root().header();
    context.xray_trace_id = Some(header.clone());
    tracing::info_span!("Lambda runtime invoke", requestId = %context.request_id, xrayTraceId = %header)
}
