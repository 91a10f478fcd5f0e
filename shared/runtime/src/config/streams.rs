//! Live output (docs/api.md, "Live output"): how often a streaming call's text is written, and
//! how long it is kept after its task ends.

use std::time::Duration;

use super::ConfigError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamConfig {
    /// The longest a piece of text waits to be written, and how long a call must have streamed
    /// before any is (`AITASK_STREAM_FLUSH_MS`, 200; 20 ms to 5 s: at 250 the chunk-to-reader p95 was 301–315 ms, over the 300 ms goal, at 200 it was 253–268 ms; BENCHMARKS.md, "Live output").
    pub flush: Duration,
    /// Text waiting that is written at once (`AITASK_STREAM_FLUSH_BYTES`, 4096; 256 to 1 MiB).
    pub flush_bytes: usize,
    /// How long after its task's end a stream is kept for a reader to finish it
    /// (`AITASK_STREAM_KEEP_SECONDS`, 60; 0 to 1 hour). The sweeper deletes it at its next sweep.
    pub keep: Duration,
}

impl Default for StreamConfig {
    fn default() -> Self {
        StreamConfig { flush: Duration::from_millis(200), flush_bytes: 4096, keep: Duration::from_secs(60) }
    }
}

impl StreamConfig {
    pub(super) fn read(
        number: impl Fn(&str, u64) -> Result<u64, ConfigError>,
    ) -> Result<StreamConfig, ConfigError> {
        let defaults = StreamConfig::default();
        Ok(StreamConfig {
            flush: Duration::from_millis(
                number("AITASK_STREAM_FLUSH_MS", defaults.flush.as_millis() as u64)?.clamp(20, 5_000),
            ),
            flush_bytes: number("AITASK_STREAM_FLUSH_BYTES", defaults.flush_bytes as u64)?.clamp(256, 1 << 20)
                as usize,
            keep: Duration::from_secs(
                number("AITASK_STREAM_KEEP_SECONDS", defaults.keep.as_secs())?.clamp(0, 3_600),
            ),
        })
    }
}
