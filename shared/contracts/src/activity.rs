//! `GET /v1/activity?bucket=&from=&to=` (docs/api.md, "Activity"): the tenant's activity in
//! time buckets (tasks created and ended, failures by error code, queue wait and run time, usage
//! by model), read from the minute rows migrations/V40 counts into. The window is parsed and
//! bounded here; the answer's shape is shared by the server and the client crate.

use chrono::{DateTime, Duration, TimeZone, Utc};
use serde::{Deserialize, Serialize};

use crate::history::instant;
use crate::problems::{Path, Problems};

/// The bucket sizes a read may ask for, in seconds.
pub const ACTIVITY_BUCKETS: [u32; 5] = [60, 300, 900, 3_600, 86_400];
/// The bucket size without `bucket`.
pub const ACTIVITY_BUCKET_DEFAULT: u32 = 3_600;
/// Buckets in one answer at most.
pub const ACTIVITY_BUCKETS_MAX: i64 = 1_440;
/// The widest window, in days.
pub const ACTIVITY_WINDOW_MAX_DAYS: i64 = 31;
/// How far back a bucket under an hour reaches: minute rows older than this are folded into
/// hours (the sweeper's `foldActivity`, after `ACTIVITY_MINUTES_KEPT_HOURS`).
pub const ACTIVITY_MINUTE_WINDOW_HOURS: i64 = 24;
/// Minute rows are folded into their hour once this old (a margin over the minute window).
pub const ACTIVITY_MINUTES_KEPT_HOURS: i64 = 26;
/// Hour rows are deleted once this old.
pub const ACTIVITY_KEPT_DAYS: i64 = 93;
/// Rows one answer reads at most; past them it says `complete: false`.
pub const ACTIVITY_ROWS_MAX: usize = 20_000;
/// Bins of a stored time histogram (migrations/V40, `histogram_bin`).
pub const HISTOGRAM_BINS: usize = 56;

/// The raw query parameters of `GET /v1/activity`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ActivityQuery<'a> {
    pub bucket: Option<&'a str>,
    pub from: Option<&'a str>,
    pub to: Option<&'a str>,
}

/// The window an activity read covers: `[from, to)` in buckets of `bucket_seconds`, both ends
/// on a bucket's edge (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActivityWindow {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub bucket_seconds: u32,
}

fn align_down(at: DateTime<Utc>, bucket: i64) -> Option<DateTime<Utc>> {
    Utc.timestamp_opt(at.timestamp().div_euclid(bucket) * bucket, 0).single()
}

fn align_up(at: DateTime<Utc>, bucket: i64) -> Option<DateTime<Utc>> {
    let down = align_down(at, bucket)?;
    if down == at {
        Some(down)
    } else {
        down.checked_add_signed(Duration::seconds(bucket))
    }
}

impl ActivityWindow {
    /// `bucket` defaults to an hour; `to` to `now`, `from` to 24 hours before it (30 days for a
    /// bucket of a day). `from` is moved down and `to` up to a bucket's edge. At most
    /// [`ACTIVITY_BUCKETS_MAX`] buckets and [`ACTIVITY_WINDOW_MAX_DAYS`] days; a bucket under an
    /// hour reaches back [`ACTIVITY_MINUTE_WINDOW_HOURS`] from `now` at most.
    pub fn parse(query: ActivityQuery<'_>, now: DateTime<Utc>) -> Result<ActivityWindow, Problems> {
        let root = Path::root();
        let mut problems = Problems::new();
        let bucket = match query.bucket {
            None => Some(ACTIVITY_BUCKET_DEFAULT),
            Some(text) => match text.parse::<u32>() {
                Ok(seconds) if ACTIVITY_BUCKETS.contains(&seconds) => Some(seconds),
                _ => {
                    problems.add(&root.key("bucket"), "must be one of 60, 300, 900, 3600, 86400 (seconds)");
                    None
                }
            },
        };
        let from = instant(&mut problems, "from", query.from);
        let to = instant(&mut problems, "to", query.to);
        let Some(bucket_seconds) = bucket.filter(|_| problems.is_empty()) else {
            return Err(problems);
        };
        let width = i64::from(bucket_seconds);
        let default_span = if bucket_seconds >= 86_400 { Duration::days(30) } else { Duration::hours(24) };
        let to_given = to.unwrap_or(now);
        // Without `from`, a window of minutes starts no earlier than they are kept.
        let earliest = (width < 3_600).then(|| now - Duration::hours(ACTIVITY_MINUTE_WINDOW_HOURS));
        let window = align_up(to_given, width).and_then(|to| {
            let from = match from {
                Some(from) => align_down(from, width)?,
                None => {
                    let default = to.checked_sub_signed(default_span)?;
                    match earliest {
                        // Up to a bucket's edge, so that it stays within the minutes kept.
                        Some(earliest) if default < earliest => align_up(earliest, width)?,
                        _ => align_down(default, width)?,
                    }
                }
            };
            Some((from, to))
        });
        let Some((from, to)) = window else {
            problems.add(&root.key("to"), "is too far from now");
            return Err(problems);
        };
        if from >= to {
            problems.add(&root.key("to"), "must be later than from");
        } else if to - from > Duration::days(ACTIVITY_WINDOW_MAX_DAYS) {
            problems
                .add(&root.key("from"), format!("must be at most {ACTIVITY_WINDOW_MAX_DAYS} days before to"));
        } else if (to - from).num_seconds() / width > ACTIVITY_BUCKETS_MAX {
            problems.add(
                &root.key("from"),
                format!(
                    "asks for more than {ACTIVITY_BUCKETS_MAX} buckets: a larger bucket, or a later from"
                ),
            );
        } else if width < 3_600
            && from < now - Duration::hours(ACTIVITY_MINUTE_WINDOW_HOURS) - Duration::seconds(width)
        {
            problems.add(
                &root.key("from"),
                format!(
                    "must be within the last {ACTIVITY_MINUTE_WINDOW_HOURS} hours for a bucket under an hour (older minutes are kept by the hour)"
                ),
            );
        }
        problems.into_result(ActivityWindow { from, to, bucket_seconds })
    }

    /// How many buckets the window holds.
    pub fn buckets(&self) -> usize {
        ((self.to - self.from).num_seconds() / i64::from(self.bucket_seconds)).max(0) as usize
    }

    /// The bucket an instant of the window falls in.
    pub fn bucket_of(&self, at: DateTime<Utc>) -> Option<usize> {
        if at < self.from || at >= self.to {
            return None;
        }
        Some(((at - self.from).num_seconds() / i64::from(self.bucket_seconds)) as usize)
    }

    /// The start of bucket `index`.
    pub fn bucket_start(&self, index: usize) -> DateTime<Utc> {
        self.from + Duration::seconds(i64::from(self.bucket_seconds) * index as i64)
    }
}

/// A time histogram as stored (`HISTOGRAM_BINS` log-scale bins of milliseconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Histogram(pub [u64; HISTOGRAM_BINS]);

impl Default for Histogram {
    fn default() -> Self {
        Histogram([0; HISTOGRAM_BINS])
    }
}

impl Histogram {
    /// Adds a stored histogram (shorter or longer arrays are read as far as they go).
    pub fn add(&mut self, bins: &[i32]) {
        for (total, count) in self.0.iter_mut().zip(bins) {
            *total = total.saturating_add(u64::try_from(*count).unwrap_or(0));
        }
    }

    pub fn samples(&self) -> u64 {
        self.0.iter().fold(0u64, |total, count| total.saturating_add(*count))
    }

    /// The `q` quantile (0 < q ≤ 1) in milliseconds: the geometric middle of the bin holding it,
    /// within 19% of the true value (bin 1 answers 1 ms; the last bin its lower edge, ~52 h).
    pub fn quantile(&self, q: f64) -> Option<u64> {
        let samples = self.samples();
        if samples == 0 {
            return None;
        }
        let rank = ((samples as f64) * q).ceil().max(1.0) as u64;
        let mut seen: u64 = 0;
        for (index, count) in self.0.iter().enumerate() {
            seen = seen.saturating_add(*count);
            if seen >= rank {
                let bin = index as i32 + 1;
                let exponent = match bin {
                    1 => 0.0,
                    b if b as usize == HISTOGRAM_BINS => f64::from(b - 1) / 2.0,
                    b => (2.0 * f64::from(b) - 1.0) / 4.0,
                };
                return Some(2f64.powf(exponent).round() as u64);
            }
        }
        None
    }

    pub fn percentiles(&self) -> Percentiles {
        Percentiles { p50: self.quantile(0.5), p95: self.quantile(0.95), samples: self.samples() }
    }
}

/// The 50th and 95th percentiles of a duration, in milliseconds (`null` with no sample).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Percentiles {
    pub p50: Option<u64>,
    pub p95: Option<u64>,
    pub samples: u64,
}

/// Failed tasks of one error code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureCount {
    pub error_code: String,
    pub tasks: u64,
}

/// What one model's tasks that ended in a bucket used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelActivity {
    pub model_id: String,
    /// Its tasks that ended in the bucket, whatever their status.
    pub tasks: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// `null` when no cost is known (no `prices`).
    pub estimated_cost_usd: Option<f64>,
}

/// One bucket of the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivityBucket {
    pub start: DateTime<Utc>,
    pub created: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub canceled: u64,
    /// The failed tasks by error code, most first.
    pub failures: Vec<FailureCount>,
    /// Creation to first start, of the tasks that ended in the bucket and ever started.
    pub queue_wait_ms: Percentiles,
    /// The last attempt's start to the end, of the tasks that ended running.
    pub run_ms: Percentiles,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub estimated_cost_usd: Option<f64>,
    /// By model id.
    pub models: Vec<ModelActivity>,
}

/// `GET /v1/activity`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Activity {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub bucket_seconds: u32,
    /// `false` when the window held more rows than one answer reads
    /// ([`ACTIVITY_ROWS_MAX`]): the later buckets are then short.
    pub complete: bool,
    /// Every bucket of the window, oldest first.
    pub buckets: Vec<ActivityBucket>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn paths(query: ActivityQuery<'_>) -> Vec<String> {
        let now = at("2026-03-01T12:30:10Z");
        ActivityWindow::parse(query, now).unwrap_err().paths().into_iter().map(str::to_owned).collect()
    }

    #[test]
    fn the_window_defaults_to_a_day_of_hours_on_bucket_edges() {
        let now = at("2026-03-01T12:30:10Z");
        let window = ActivityWindow::parse(ActivityQuery::default(), now).unwrap();
        assert_eq!((window.from, window.to), (at("2026-02-28T13:00:00Z"), at("2026-03-01T13:00:00Z")));
        assert_eq!((window.bucket_seconds, window.buckets()), (3_600, 24));
        let days = ActivityWindow::parse(ActivityQuery { bucket: Some("86400"), ..Default::default() }, now)
            .unwrap();
        assert_eq!(
            (days.from, days.to, days.buckets()),
            (at("2026-01-31T00:00:00Z"), at("2026-03-02T00:00:00Z"), 30)
        );
        let hour = ActivityQuery { bucket: Some("60"), from: Some("2026-03-01T11:30:10Z"), to: None };
        let hour = ActivityWindow::parse(hour, now).unwrap();
        assert_eq!((hour.from, hour.buckets()), (at("2026-03-01T11:30:00Z"), 61));
        assert_eq!(hour.bucket_of(at("2026-03-01T11:31:59Z")), Some(1));
        assert_eq!(hour.bucket_of(at("2026-03-01T12:31:00Z")), None);
        assert_eq!(hour.bucket_start(2), at("2026-03-01T11:32:00Z"));
    }

    #[test]
    fn a_window_is_bounded_and_a_bad_parameter_is_named() {
        assert_eq!(paths(ActivityQuery { bucket: Some("61"), ..Default::default() }), ["bucket"]);
        assert_eq!(
            paths(ActivityQuery { bucket: Some("x"), from: Some("yesterday"), to: None }),
            ["bucket", "from"]
        );
        let reversed = ActivityQuery {
            from: Some("2026-03-01T00:00:00Z"),
            to: Some("2026-02-01T00:00:00Z"),
            ..Default::default()
        };
        assert_eq!(paths(reversed), ["to"]);
        let long = ActivityQuery {
            from: Some("2026-01-01T00:00:00Z"),
            to: Some("2026-03-01T00:00:00Z"),
            ..Default::default()
        };
        assert_eq!(paths(long), ["from"]);
        let minutes_of_a_week =
            ActivityQuery { bucket: Some("300"), from: Some("2026-02-26T00:00:00Z"), to: None };
        assert_eq!(paths(minutes_of_a_week), ["from"]);
        let old_minutes = ActivityQuery {
            bucket: Some("60"),
            from: Some("2026-02-20T00:00:00Z"),
            to: Some("2026-02-20T01:00:00Z"),
        };
        assert_eq!(paths(old_minutes), ["from"], "minute buckets reach back 24 hours");
        // Without `from`, a window of minutes ending two hours ago starts 24 hours back, not 26.
        let now = at("2026-03-01T12:30:10Z");
        let earlier = ActivityQuery { bucket: Some("60"), from: None, to: Some("2026-03-01T10:30:00Z") };
        let window = ActivityWindow::parse(earlier, now).unwrap();
        assert_eq!((window.from, window.to), (at("2026-02-28T12:31:00Z"), at("2026-03-01T10:30:00Z")));
    }

    #[test]
    fn percentiles_come_from_the_bins_within_their_width() {
        let mut histogram = Histogram::default();
        assert_eq!(histogram.percentiles(), Percentiles { p50: None, p95: None, samples: 0 });
        let mut bins = [0i32; HISTOGRAM_BINS];
        // 90 samples of ~100 ms (bin 14: (90.5, 128] ms), 10 of ~10 s (bin 27).
        bins[13] = 90;
        bins[26] = 10;
        histogram.add(&bins);
        let found = histogram.percentiles();
        assert_eq!(found.samples, 100);
        let p50 = found.p50.unwrap() as f64;
        assert!((90.0..=128.0).contains(&p50), "{p50}");
        let p95 = found.p95.unwrap() as f64;
        assert!((8_192.0..=11_586.0).contains(&p95), "{p95}");
        let mut tiny = Histogram::default();
        tiny.add(&[3]);
        assert_eq!(tiny.quantile(0.95), Some(1));
    }
}
