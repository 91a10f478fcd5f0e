//! This system's pickup split into its parts, from the records its worker prints: the create
//! and its send (insert time to the queue's `SentTimestamp`), the queue (to the receive's
//! return: delivery, the long poll's wake-up, and any wait for a worker loop free to receive),
//! and the claim (to the worker's start: a pooled connection and `claim_by`). A message sent
//! again (a busy row's, or the sweeper's) is its own: its parts count from that send, and the
//! first delivery's time falls in "create and send". On one machine the queue's clock is the
//! workers'; on two, the split would carry their skew. Each part's percentiles, and where the slowest 1% of jobs spent
//! their time (each part's median over the jobs at or above the phase's pickup p99, and the
//! slowest job's parts): which step holds the tail. Medians, not means: one job held for seconds
//! would make a mean of every part say nothing about the others.

use serde_json::{json, Value};

use super::measure::{self, Pickup};
use super::process::Record;

/// A job's three parts, milliseconds: create and send, queue, claim.
type Split = (i64, i64, i64);

/// The three parts, in milliseconds: their percentiles over the phase's jobs, their medians over
/// its slowest 1%, and the slowest job's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Parts {
    pub(crate) create_and_send: Pickup,
    pub(crate) queue: Pickup,
    pub(crate) claim: Pickup,
    /// Each part's median over the jobs whose pickup is at or above p99.
    pub(crate) tail: (f64, f64, f64),
    pub(crate) tail_jobs: usize,
    /// The slowest job's pickup and its parts.
    pub(crate) slowest: (i64, Split),
    /// Jobs whose message the queue had delivered before the delivery that ran them (an earlier
    /// one was lost on its way to a worker and came back after the visibility timeout).
    pub(crate) redelivered: usize,
}

/// A job's three parts; `None` for a record without the stamps (a peer's, or one read back from
/// the store after its worker was killed).
fn split(r: &Record) -> Option<Split> {
    let (sent, received) = (r.sent?, r.received?);
    Some(((sent - r.at).max(0), (received - sent).max(0), (r.start - received).max(0)))
}

/// The parts of a phase's jobs; `None` when none carries the stamps.
pub(crate) fn of(records: &[Record]) -> Option<Parts> {
    // A job run twice counts its first run, as its pickup does.
    let mut first: std::collections::HashMap<i64, &Record> = std::collections::HashMap::new();
    for r in records {
        let kept = first.entry(r.id).or_insert(r);
        if r.start < kept.start {
            *kept = r;
        }
    }
    let mut jobs: Vec<(i64, Split)> =
        first.values().filter_map(|r| Some(((r.start - r.at).max(0), split(r)?))).collect();
    // Slowest first.
    jobs.sort_unstable_by_key(|(total, _)| std::cmp::Reverse(*total));
    let slowest = *jobs.first()?;
    let p99 = measure::percentiles(jobs.iter().map(|(total, _)| *total).collect()).p99 as i64;
    let tail: Vec<Split> = jobs.iter().take_while(|(total, _)| *total >= p99).map(|(_, p)| *p).collect();
    let median = |f: fn(&Split) -> i64| measure::percentiles(tail.iter().map(f).collect()).p50;
    Some(Parts {
        create_and_send: measure::percentiles(jobs.iter().map(|(_, p)| p.0).collect()),
        queue: measure::percentiles(jobs.iter().map(|(_, p)| p.1).collect()),
        claim: measure::percentiles(jobs.iter().map(|(_, p)| p.2).collect()),
        tail: (median(|p| p.0), median(|p| p.1), median(|p| p.2)),
        tail_jobs: tail.len(),
        slowest,
        redelivered: first.values().filter(|r| r.receives.is_some_and(|n| n > 1)).count(),
    })
}

impl Parts {
    pub(crate) fn json(&self) -> Value {
        let one = |p: &Pickup| json!({"p50": p.p50, "p95": p.p95, "p99": p.p99});
        json!({"createAndSend": one(&self.create_and_send), "queue": one(&self.queue), "claim": one(&self.claim),
               "slowestOnePercent": {"jobs": self.tail_jobs, "createAndSendMedian": self.tail.0,
                                     "queueMedian": self.tail.1, "claimMedian": self.tail.2},
               "redelivered": self.redelivered,
               "slowest": {"pickup": self.slowest.0, "createAndSend": self.slowest.1 .0,
                           "queue": self.slowest.1 .1, "claim": self.slowest.1 .2}})
    }

    /// One line of the section's output.
    pub(crate) fn line(&self) -> String {
        let (c, q, k) = (&self.create_and_send, &self.queue, &self.claim);
        let (total, (sc, sq, sk)) = self.slowest;
        format!(
            "create+send p50/p99 {:.0}/{:.0} ms, queue {:.0}/{:.0}, claim {:.0}/{:.0}; the slowest 1% ({} jobs), \
             medians {:.0} / {:.0} / {:.0} ms; the slowest job {total} ms: {sc} / {sq} / {sk}; {} delivered more than once",
            c.p50,
            c.p99,
            q.p50,
            q.p99,
            k.p50,
            k.p99,
            self.tail_jobs,
            self.tail.0,
            self.tail.1,
            self.tail.2,
            self.redelivered
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: i64, at: i64, sent: i64, received: i64, start: i64) -> Record {
        Record {
            id,
            at,
            start,
            done: start + 1,
            sent: Some(sent),
            received: Some(received),
            receives: Some(1),
        }
    }

    #[test]
    fn each_part_is_measured_and_the_tail_says_which_part_held_it() {
        // 98 jobs whose parts are 2 + 1 + 1 ms, and two that waited 50 ms in the queue.
        let mut records: Vec<Record> = (0..98).map(|i| job(i, 1000, 1002, 1003, 1004)).collect();
        records.extend([job(98, 1000, 1002, 1052, 1053), job(99, 1000, 1002, 1052, 1053)]);
        records[99].receives = Some(2);
        // A peer's record (no stamps) and a second run of job 0 (later) change nothing.
        records.push(Record {
            id: 500,
            at: 0,
            start: 9000,
            done: 9001,
            sent: None,
            received: None,
            receives: None,
        });
        records.push(job(0, 1000, 1002, 1500, 1600));
        let parts = of(&records).expect("parts");
        assert_eq!((parts.create_and_send.p50, parts.queue.p50, parts.claim.p50), (2.0, 1.0, 1.0));
        assert_eq!(parts.queue.p99, 50.0);
        assert_eq!(parts.tail_jobs, 2);
        assert_eq!(parts.tail, (2.0, 50.0, 1.0));
        assert_eq!(parts.slowest, (53, (2, 50, 1)));
        let line = parts.line();
        assert!(
            line.contains(
                "the slowest 1% (2 jobs), medians 2 / 50 / 1 ms; the slowest job 53 ms: 2 / 50 / 1; 1 delivered more than once"
            ),
            "{line}"
        );
    }

    #[test]
    fn records_without_the_stamps_have_no_parts() {
        let peer = Record { id: 1, at: 0, start: 5, done: 6, sent: None, received: None, receives: None };
        assert!(of(&[peer]).is_none());
    }
}
