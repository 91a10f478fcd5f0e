//! A task's live output (`GET /v1/tasks/{id}/output`, docs/api.md "Live output"): one read (the
//! follower, `follow`, reads it to its end).

use std::time::Duration;

use aitasks_contracts::{TaskOutput, MAX_WAIT_SECONDS};
use reqwest::Method;
use uuid::Uuid;

use crate::client::{query, Call, Client};
use crate::error::Error;

/// What one read of a task's live output asks: the reader's place and how long to wait for
/// something new. The default reads the current segment from its start, without waiting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOutput {
    /// The segment `after` belongs to (the last answer's `segment`); `None`: the current one.
    pub segment: Option<i32>,
    /// Characters (Unicode code points) of that segment the reader has.
    pub after: i64,
    /// How long the API may hold the read for something new (at most 20 s; whole milliseconds).
    pub wait: Duration,
}

/// `wait` as the query takes it: seconds, at most [`MAX_WAIT_SECONDS`], whole milliseconds.
fn wait_seconds(wait: Duration) -> String {
    let millis = wait.as_millis().min(u128::from(MAX_WAIT_SECONDS) * 1000);
    if millis.is_multiple_of(1000) {
        (millis / 1000).to_string()
    } else {
        format!("{}.{:03}", millis / 1000, millis % 1000)
    }
}

impl Client {
    /// `GET /v1/tasks/{id}/output?segment=&after=&wait=`: the text of the task's answer after the
    /// reader's place, and where the stream and the task stand. One read unit, however long it
    /// waits.
    pub async fn output(&self, id: Uuid, read: &ReadOutput) -> Result<TaskOutput, Error> {
        let target = format!(
            "/v1/tasks/{id}/output{}",
            query(&[
                ("segment", read.segment.map(|s| s.to_string())),
                ("after", Some(read.after.to_string())),
                ("wait", (!read.wait.is_zero()).then(|| wait_seconds(read.wait))),
            ])
        );
        let mut call = Call::new(Method::GET, target);
        call.extra_time = read.wait.min(Duration::from_secs(MAX_WAIT_SECONDS));
        self.send(&call).await?.decode()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_is_whole_seconds_or_milliseconds_and_at_most_twenty() {
        assert_eq!(wait_seconds(Duration::from_secs(20)), "20");
        assert_eq!(wait_seconds(Duration::from_secs(90)), "20");
        assert_eq!(wait_seconds(Duration::from_millis(1500)), "1.500");
        assert_eq!(wait_seconds(Duration::from_millis(5)), "0.005");
    }
}
