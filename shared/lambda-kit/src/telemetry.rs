//! Tracing: JSON lines in Lambda (`AWS_LAMBDA_LOG_FORMAT=JSON`, or `AITASK_LOG_FORMAT=json`),
//! plain text elsewhere. `RUST_LOG` (or `AWS_LAMBDA_LOG_LEVEL`) sets the level, `info` by default.

use tracing_subscriber::EnvFilter;

pub fn init_tracing() {
    let level =
        std::env::var("AWS_LAMBDA_LOG_LEVEL").ok().map(|l| l.to_lowercase()).unwrap_or_else(|| "info".into());
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let json = std::env::var("AWS_LAMBDA_LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json"))
        || std::env::var("AITASK_LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    // A second init (tests, the dev server hosting every function) is harmless.
    let _ = if json {
        builder.json().flatten_event(true).with_current_span(true).without_time().try_init()
    } else {
        builder.with_ansi(false).try_init()
    };
}
