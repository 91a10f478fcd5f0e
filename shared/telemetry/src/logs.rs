//! Logging, as the Lambda runtime's own subscriber does it: `AWS_LAMBDA_LOG_LEVEL` (or
//! `RUST_LOG`) picks the level, `AWS_LAMBDA_LOG_FORMAT=JSON` (or `AITASK_LOG_FORMAT=json`, for
//! the dev server) picks JSON lines. Every line has a timestamp.
//!
//! In JSON, the event's fields and the fields of every span it is in are top-level members:
//! the runtime's `requestId`, the request's `route`, `tenant` and `task_id`, the worker's
//! `task_id` and `attempt`. CloudWatch Logs Insights filters on them directly
//! (`filter tenant = "..." and task_id = "..."`).

use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

pub fn init_tracing() {
    let level =
        std::env::var("AWS_LAMBDA_LOG_LEVEL").ok().map(|l| l.to_lowercase()).unwrap_or_else(|| "info".into());
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let json = std::env::var("AWS_LAMBDA_LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json"))
        || std::env::var("AITASK_LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json"));
    // Traces go to the X-Ray daemon when Lambda runs one (`Tracing: Active`), whatever the log
    // level: the spans they need are chosen by name, so no other callsite is enabled for them.
    let xray = crate::xray::XrayLayer::from_env()
        .map(|layer| layer.with_filter(filter_fn(crate::xray::XrayLayer::wants)));
    // A second init (tests, the dev server hosting every function) is harmless.
    if json {
        let mut layer = json_subscriber::JsonLayer::new(std::io::stderr);
        layer
            .with_timer("timestamp", tracing_subscriber::fmt::time::SystemTime)
            .with_level("level")
            .with_target("target")
            .with_flattened_event()
            .with_top_level_flattened_span_list();
        let _ = tracing_subscriber::registry().with(xray).with(layer.with_filter(filter)).try_init();
    } else {
        let layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(false);
        let _ = tracing_subscriber::registry().with(xray).with(layer.with_filter(filter)).try_init();
    }
}
