//! An attempt's live output, written (docs/api.md, "Live output"): the provider client's [`Tap`], whose
//! text a task of its own writes to the store, coalesced. The call is never slowed by it: the
//! tap only appends to memory and wakes the writer; the writer writes a segment's text once the
//! call has streamed for one flush interval (a short answer writes nothing), then every flush
//! interval or once `flush_bytes` wait, and the rest, marked final, when the call's answer ends.
//! Writes are fenced on the lease, so a worker that lost its task writes nothing more.
//!
//! Live output is a view, never the record: text past the task's output limit is not written
//! (that answer fails anyway), and a segment whose write fails is written no further (a reader
//! sees it stop short, then the task's end) rather than with a gap.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use aitasks_providers::Tap;
use aitasks_store::{self as store, Chunk, Lease, StorePool, StoreResult};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::deadline::within;
use crate::config::streams::StreamConfig;

/// The longest one write may take before the writer gives up on its segment.
const WRITE_LIMIT: Duration = Duration::from_secs(2);

/// The longest the end of an attempt waits for the last writes: the settlement comes first, so
/// never more than half the time kept for it before the invocation's deadline
/// (`AITASK_DEADLINE_MARGIN_MS`).
const CLOSE_LIMIT: Duration = Duration::from_secs(2);

/// The writer of one attempt's live output; [`LiveOutput::tap`] is what the calls are given.
pub(super) struct LiveOutput {
    shared: Arc<Shared>,
    writer: Option<JoinHandle<()>>,
}

impl LiveOutput {
    /// Start the writer of `lease`'s attempt.
    pub(super) fn start(pool: StorePool, lease: Lease, config: StreamConfig) -> LiveOutput {
        let shared = Arc::new(Shared { state: Mutex::new(State::default()), wake: Notify::new(), config });
        let writer = tokio::spawn(write(Arc::clone(&shared), pool, lease));
        LiveOutput { shared, writer: Some(writer) }
    }

    pub(super) fn tap(&self) -> &dyn Tap {
        self.shared.as_ref()
    }

    /// The calls are over: write what is owed (the ended segments' last text) within
    /// [`CLOSE_LIMIT`], then stop. A segment whose call was dropped (canceled, out of time) is
    /// left as it is.
    pub(super) async fn close(mut self, deadline_margin: Duration) {
        self.shared.lock().closed = true;
        self.shared.wake.notify_one();
        if let Some(mut writer) = self.writer.take() {
            if tokio::time::timeout(CLOSE_LIMIT.min(deadline_margin / 2), &mut writer).await.is_err() {
                tracing::warn!("the live output's last write did not finish in time; left");
                writer.abort();
            }
        }
    }
}

impl Drop for LiveOutput {
    fn drop(&mut self) {
        // Dropped unclosed (the attempt panicked): stop writing.
        if let Some(writer) = self.writer.take() {
            writer.abort();
        }
    }
}

struct Shared {
    state: Mutex<State>,
    wake: Notify,
    config: StreamConfig,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is a buffer of text: a panic elsewhere leaves it usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[derive(Default)]
struct State {
    /// The segments begun and not yet written to their end, oldest first.
    segments: VecDeque<Segment>,
    closed: bool,
}

struct Segment {
    began: Instant,
    /// Text told and not yet written.
    pending: String,
    /// Characters written so far: the next chunk's `start_at`.
    written: i32,
    /// Its number in the store, once its first chunk is written.
    number: Option<i32>,
    last_write: Option<Instant>,
    /// Bytes told in all, against the output limit.
    told: usize,
    ended: bool,
    /// Written no further (over the output limit, or a write failed).
    stopped: bool,
}

impl Tap for Shared {
    fn begin(&self) {
        let segment = Segment {
            began: Instant::now(),
            pending: String::new(),
            written: 0,
            number: None,
            last_write: None,
            told: 0,
            ended: false,
            stopped: false,
        };
        self.lock().segments.push_back(segment);
    }

    fn text(&self, text: &str) {
        let mut state = self.lock();
        let Some(segment) = state.segments.back_mut().filter(|s| !s.ended && !s.stopped) else { return };
        segment.told = segment.told.saturating_add(text.len());
        if segment.told > aitasks_contracts::OUTPUT_MAX_BYTES {
            segment.stopped = true;
            return;
        }
        // The writer waits for text when it has none: woken by the first piece after a write
        // (it then sleeps until the piece is due) and by a full buffer.
        let first = segment.pending.is_empty();
        // Postgres' text holds no NUL; an answer with one fails the checks anyway. One
        // character for one keeps the offsets.
        segment.pending.extend(text.chars().map(|c| if c == '\0' { '\u{FFFD}' } else { c }));
        let full = segment.pending.len() >= self.config.flush_bytes;
        drop(state);
        if first || full {
            self.wake.notify_one();
        }
    }

    fn end(&self) {
        if let Some(segment) = self.lock().segments.back_mut() {
            segment.ended = true;
        }
        self.wake.notify_one();
    }
}

/// A write the writer owes now.
struct Due {
    text: String,
    start_at: i32,
    number: Option<i32>,
    is_final: bool,
}

enum Next {
    Write(Due),
    /// Nothing before this instant (or a wake).
    WaitUntil(Option<Instant>),
    Stop,
}

/// What the front segment owes at `now`, taking its text.
fn next(state: &mut State, config: &StreamConfig, now: Instant) -> Next {
    while let Some(segment) = state.segments.front_mut() {
        let streamed_long_enough = now.duration_since(segment.began) >= config.flush;
        let finished = segment.ended || state.closed;
        let dropped_call = state.closed && !segment.ended;
        let never_written = segment.number.is_none();
        let nothing_owed = segment.stopped
            || dropped_call
            // A short answer writes nothing, nor a call that streamed no text.
            || (finished && never_written && (!streamed_long_enough || segment.pending.is_empty()));
        if nothing_owed {
            state.segments.pop_front();
            continue;
        }
        if finished {
            let Some(Segment { pending, written, number, .. }) = state.segments.pop_front() else { break };
            return Next::Write(Due { text: pending, start_at: written, number, is_final: true });
        }
        let due_at = match segment.last_write {
            None => segment.began + config.flush,
            Some(last) => last + config.flush,
        };
        let full = segment.pending.len() >= config.flush_bytes && streamed_long_enough;
        if !segment.pending.is_empty() && (now >= due_at || full) {
            let text = std::mem::take(&mut segment.pending);
            let write = Due { text, start_at: segment.written, number: segment.number, is_final: false };
            segment.written = segment.written.saturating_add(char_count(&write.text));
            segment.last_write = Some(now);
            return Next::Write(write);
        }
        // No text: nothing is due until some comes (its first piece wakes the writer).
        if segment.pending.is_empty() {
            return Next::WaitUntil(None);
        }
        return Next::WaitUntil(Some(due_at));
    }
    if state.closed {
        Next::Stop
    } else {
        Next::WaitUntil(None)
    }
}

fn char_count(text: &str) -> i32 {
    i32::try_from(text.chars().count()).unwrap_or(i32::MAX)
}

/// The writer: the front segment's text as it comes due, until the attempt closes.
async fn write(shared: Arc<Shared>, pool: StorePool, lease: Lease) {
    loop {
        let next = next(&mut shared.lock(), &shared.config, Instant::now());
        let due = match next {
            Next::Write(due) => due,
            Next::Stop => return,
            Next::WaitUntil(at) => {
                match at {
                    Some(at) => {
                        tokio::select! {
                            _ = shared.wake.notified() => {}
                            _ = tokio::time::sleep_until(at) => {}
                        }
                    }
                    None => shared.wake.notified().await,
                }
                continue;
            }
        };
        let written = within(WRITE_LIMIT, write_chunk(&pool, lease, &due)).await;
        let mut state = shared.lock();
        match written {
            // The task no longer runs this attempt: nothing more is written.
            Ok(None) => {
                state.segments.clear();
                state.closed = true;
                return;
            }
            Ok(Some(number)) => {
                if let Some(segment) =
                    state.segments.front_mut().filter(|s| s.number.is_none() && !due.is_final)
                {
                    segment.number = Some(number);
                }
            }
            Err(error) => {
                tracing::warn!(error = %crate::error_chain(&error), "could not write live output; its segment is written no further");
                if let Some(segment) = state.segments.front_mut().filter(|_| !due.is_final) {
                    segment.stopped = true;
                }
            }
        }
    }
}

/// One chunk written: the segment's number, or `None` when the lease is lost.
async fn write_chunk(pool: &StorePool, lease: Lease, due: &Due) -> StoreResult<Option<i32>> {
    let client = store::client(pool).await?;
    let chunk = Chunk { start_at: due.start_at, text: &due.text, is_final: due.is_final };
    match due.number {
        None => store::open_segment(&client, lease, chunk).await,
        Some(number) => Ok(store::append_chunk(&client, lease, number, chunk).await?.then_some(number)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared() -> Shared {
        Shared { state: Mutex::new(State::default()), wake: Notify::new(), config: StreamConfig::default() }
    }

    /// What is written at `now`, as (start, text, final), until nothing is due.
    fn writes(shared: &Shared, now: Instant) -> Vec<(i32, String, bool)> {
        let mut done = Vec::new();
        loop {
            // The state's guard is let go before the segment is numbered (held through a
            // `while let` body, the second lock deadlocked every test that writes).
            let due = next(&mut shared.lock(), &shared.config, now);
            let Next::Write(due) = due else { break };
            if let Some(segment) =
                shared.lock().segments.front_mut().filter(|s| s.number.is_none() && !due.is_final)
            {
                segment.number = Some(1);
            }
            done.push((due.start_at, due.text, due.is_final));
        }
        done
    }

    #[test]
    fn a_short_answer_writes_nothing() {
        let tap = shared();
        tap.begin();
        let start = Instant::now();
        tap.text("{\"choice\": \"pos\"}");
        tap.end();
        assert!(writes(&tap, start + Duration::from_millis(10)).is_empty());
        assert!(tap.lock().segments.is_empty(), "the segment is dropped");
    }

    #[test]
    fn text_is_written_each_interval_and_the_rest_final_with_offsets_in_characters() {
        let tap = shared();
        let flush = tap.config.flush;
        tap.begin();
        let start = Instant::now();
        tap.text("é😀a");
        assert!(writes(&tap, start + flush / 2).is_empty(), "not before one interval");
        assert_eq!(writes(&tap, start + flush), [(0, "é😀a".to_owned(), false)]);
        tap.text("bc");
        assert!(writes(&tap, start + flush + flush / 2).is_empty(), "one write an interval");
        tap.text("d");
        tap.end();
        assert_eq!(
            writes(&tap, start + flush + flush / 2),
            [(3, "bcd".to_owned(), true)],
            "the end is written at once"
        );
    }

    #[test]
    fn a_full_buffer_is_written_before_its_interval_and_text_past_the_output_limit_is_not() {
        let tap = shared();
        let flush = tap.config.flush;
        tap.begin();
        let start = Instant::now();
        tap.text("x");
        assert_eq!(writes(&tap, start + flush).len(), 1);
        tap.text(&"y".repeat(tap.config.flush_bytes));
        assert_eq!(writes(&tap, start + flush + Duration::from_millis(1)).len(), 1, "full: written at once");
        tap.text(&"z".repeat(aitasks_contracts::OUTPUT_MAX_BYTES));
        tap.end();
        assert!(writes(&tap, start + flush * 3).is_empty(), "a segment past the limit is written no further");
    }

    #[test]
    fn a_call_dropped_midway_leaves_its_segment_and_a_nul_keeps_its_place() {
        let tap = shared();
        tap.begin();
        let start = Instant::now();
        tap.text("a\0b");
        assert_eq!(writes(&tap, start + tap.config.flush), [(0, "a\u{FFFD}b".to_owned(), false)]);
        tap.text("more");
        tap.lock().closed = true;
        assert!(writes(&tap, start + tap.config.flush * 2).is_empty(), "not ended: nothing more");
        assert!(matches!(next(&mut tap.lock(), &tap.config, start), Next::Stop));
    }
}
