//! Logging, as the Lambda runtime's own subscriber does it: `RUST_LOG`, else
//! `AWS_LAMBDA_LOG_LEVEL`, picks the level, `AWS_LAMBDA_LOG_FORMAT=JSON` (or `AITASK_LOG_FORMAT=json`, for
//! the dev server) picks JSON lines. Every line has a timestamp.
//!
//! In JSON, the event's fields and the fields of every span it is in are top-level members:
//! the runtime's `requestId`, the request's `route`, `tenant` and `task_id`, the worker's
//! `task_id` and `attempt`. CloudWatch Logs Insights filters on them directly
//! (`filter tenant = "..." and task_id = "..."`).

use tracing::Level;
use tracing_subscriber::filter::{filter_fn, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

pub fn init_tracing() {
    let filter = log_filter(std::env::var("RUST_LOG").ok(), std::env::var("AWS_LAMBDA_LOG_LEVEL").ok());
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

/// What is logged: `RUST_LOG`'s directives (`info`, `warn, aitasks_runtime=debug`, `off`), else
/// `AWS_LAMBDA_LOG_LEVEL` (`TRACE` to `FATAL`, any case; `FATAL` is `error` here), else `info`.
/// A value that does not parse is passed over for the next. Spaces around a directive and empty
/// directives (`info,`) are dropped, as `EnvFilter` dropped them.
///
/// `Targets` takes the level-and-target directives `EnvFilter` takes, but not its span and
/// field filters (`[span{field=value}]`): those need a regex engine, which was 0.9 MB of each
/// binary for a feature no deployment here uses (BENCHMARKS.md, issue 51).
pub(crate) fn log_filter(rust_log: Option<String>, lambda_level: Option<String>) -> Targets {
    let lambda = lambda_level.and_then(|level| match level.to_ascii_lowercase().as_str() {
        "fatal" => Some(Targets::new().with_default(Level::ERROR)),
        other => other.parse::<Level>().ok().map(|level| Targets::new().with_default(level)),
    });
    rust_log
        .map(|directives| {
            let kept: Vec<&str> = directives.split(',').map(str::trim).filter(|d| !d.is_empty()).collect();
            kept.join(",")
        })
        .filter(|directives| !directives.is_empty())
        .and_then(|directives| directives.parse::<Targets>().ok())
        .or(lambda)
        .unwrap_or_else(|| Targets::new().with_default(Level::INFO))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enables(filter: &Targets, target: &str, level: Level) -> bool {
        filter.would_enable(target, &level)
    }

    #[test]
    fn rust_log_directives_come_first() {
        let filter = log_filter(Some("warn,aitasks_runtime=debug".into()), Some("TRACE".into()));
        assert!(enables(&filter, "hyper", Level::WARN));
        assert!(!enables(&filter, "hyper", Level::INFO));
        assert!(enables(&filter, "aitasks_runtime::worker", Level::DEBUG));
        assert!(!enables(&filter, "aitasks_runtime", Level::TRACE));
        let spaced = log_filter(Some(" warn , aitasks_runtime=debug,".into()), None);
        assert!(
            enables(&spaced, "aitasks_runtime", Level::DEBUG),
            "spaces and an empty directive are dropped"
        );
        assert!(!enables(&spaced, "hyper", Level::INFO));
        let trailing = log_filter(Some("info,".into()), None);
        assert!(enables(&trailing, "hyper", Level::INFO), "a trailing comma is not an `error` directive");
        let off = log_filter(Some("off".into()), None);
        assert!(!enables(&off, "aitasks_runtime", Level::ERROR));
    }

    #[test]
    fn the_lambda_level_applies_when_rust_log_is_absent_or_blank() {
        let debug = log_filter(None, Some("DEBUG".into()));
        assert!(enables(&debug, "aitasks_store", Level::DEBUG));
        assert!(!enables(&debug, "aitasks_store", Level::TRACE));
        let unparsable = log_filter(Some("warn=loud".into()), Some("DEBUG".into()));
        assert!(
            enables(&unparsable, "aitasks_store", Level::DEBUG),
            "RUST_LOG that does not parse is passed over"
        );
        let fatal = log_filter(Some("  ".into()), Some("FATAL".into()));
        assert!(enables(&fatal, "aitasks_store", Level::ERROR));
        assert!(!enables(&fatal, "aitasks_store", Level::WARN));
    }

    #[test]
    fn info_when_nothing_is_set_or_the_level_is_unknown() {
        for filter in [log_filter(None, None), log_filter(None, Some("loud".into()))] {
            assert!(enables(&filter, "aitasks_store", Level::INFO));
            assert!(!enables(&filter, "aitasks_store", Level::DEBUG));
        }
    }
}
