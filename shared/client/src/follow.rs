//! Following a task's live output: long polls from the reader's place, each answer turned into
//! the text it adds, until the task has ended and its last segment is read to its end.

use std::time::Duration;

use aitasks_contracts::{TaskOutput, MAX_WAIT_SECONDS};
use futures::stream::{self, Stream};
use serde::Serialize;
use tokio::time::Instant;
use uuid::Uuid;

use crate::client::Client;
use crate::error::Error;
use crate::output::ReadOutput;

/// The pause before the next read when an answer came back before its wait with nothing new, so
/// a server that does not hold the read costs a read a second, not a loop of them.
pub const OUTPUT_IDLE_PAUSE: Duration = Duration::from_secs(1);

/// The pause before the next read: after an answer with nothing new, what is left of
/// [`OUTPUT_IDLE_PAUSE`] since the read was sent, whatever the read's wait (a follower whose
/// reads do not wait, or a server that does not hold them, reads at most once a second).
fn idle_pause(idle: bool, since_asked: Duration) -> Duration {
    if idle {
        OUTPUT_IDLE_PAUSE.saturating_sub(since_asked)
    } else {
        Duration::ZERO
    }
}

/// Where a follower starts and how long each read waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FollowOptions {
    /// The segment the reader has text of (a reconnect: the last piece's `segment`); `None`:
    /// the current one from its start.
    pub segment: Option<i32>,
    /// Characters (Unicode code points) of that segment the reader has.
    pub after: i64,
    /// How long each read may be held for something new (at most 20 s).
    pub wait: Duration,
}

impl Default for FollowOptions {
    /// From the start, reads held up to 20 s.
    fn default() -> FollowOptions {
        FollowOptions { segment: None, after: 0, wait: Duration::from_secs(MAX_WAIT_SECONDS) }
    }
}

/// Text a follower read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputPiece {
    /// The text, following what the reader has of this segment.
    pub text: String,
    /// The segment it belongs to.
    pub segment: i32,
    /// The attempt that wrote it.
    pub attempt: i32,
    /// A new segment began after one the reader has text of: that text is void (a retry, a
    /// repair turn or a fallback call writes its answer afresh); this piece starts the new one
    /// (its text may be empty).
    pub restarted: bool,
    /// Where this text ends in its segment: the `after` of a reconnect.
    pub next: i64,
}

/// The reader's place, and what an answer adds to it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Place {
    segment: Option<i32>,
    after: i64,
    /// The segment of the text handed out so far, if any.
    shown: Option<i32>,
    /// The current segment's `final` as last read.
    ended_stream: bool,
}

/// What one answer means to the reader.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) piece: Option<OutputPiece>,
    /// Nothing more will come: the task has ended and its stream is read to its end.
    pub(crate) done: bool,
    /// The answer changed nothing for the reader.
    pub(crate) idle: bool,
}

impl Place {
    pub(crate) fn starting(options: &FollowOptions) -> Place {
        Place {
            segment: options.segment,
            after: options.after.max(0),
            shown: options.segment.filter(|_| options.after > 0),
            ended_stream: false,
        }
    }

    fn read(&self, wait: Duration) -> ReadOutput {
        ReadOutput { segment: self.segment, after: self.after, wait }
    }

    pub(crate) fn take(&mut self, answer: &TaskOutput) -> Step {
        let done = answer.ended && (answer.segment.is_none() || answer.is_final || answer.text.is_empty());
        let (Some(segment), Some(attempt)) = (answer.segment, answer.attempt) else {
            return Step { piece: None, done, idle: !done };
        };
        let moved = self.segment != Some(segment);
        let restarted = self.shown.is_some_and(|shown| shown != segment);
        let news = moved || answer.is_final != self.ended_stream || !answer.text.is_empty();
        self.segment = Some(segment);
        self.after = answer.next;
        self.ended_stream = answer.is_final;
        let piece = (restarted || !answer.text.is_empty()).then(|| {
            self.shown = Some(segment);
            OutputPiece { text: answer.text.clone(), segment, attempt, restarted, next: answer.next }
        });
        Step { piece, done, idle: !news && !done }
    }
}

/// Follows a task's live output: [`OutputFollower::next`] gives the text as the model writes it,
/// piece by piece, and `None` once the task has ended and the last segment is read to its end
/// (or there is none: a deferred task, a short answer, a stream already dropped; read the task).
///
/// Each read is one `GET /v1/tasks/{id}/output` held up to [`FollowOptions::wait`] (one read
/// unit each), tried again on 429 and 5xx as the client's [`crate::RetryPolicy`] says. An error
/// ends the follower: the next call gives `None`; start another from [`OutputPiece::next`] to
/// resume without a gap or a repeat.
#[derive(Debug)]
pub struct OutputFollower {
    client: Client,
    id: Uuid,
    wait: Duration,
    place: Place,
    last: Option<TaskOutput>,
    finished: bool,
}

impl OutputFollower {
    pub(crate) fn new(client: Client, id: Uuid, options: FollowOptions) -> OutputFollower {
        OutputFollower {
            client,
            id,
            wait: options.wait.min(Duration::from_secs(MAX_WAIT_SECONDS)),
            place: Place::starting(&options),
            last: None,
            finished: false,
        }
    }

    /// The next piece of text; `None` at the end (or after an error).
    pub async fn next(&mut self) -> Option<Result<OutputPiece, Error>> {
        while !self.finished {
            let asked = Instant::now();
            let answer = match self.client.output(self.id, &self.place.read(self.wait)).await {
                Ok(answer) => answer,
                Err(error) => {
                    self.finished = true;
                    return Some(Err(error));
                }
            };
            let step = self.place.take(&answer);
            self.last = Some(answer);
            self.finished = step.done;
            if let Some(piece) = step.piece {
                return Some(Ok(piece));
            }
            tokio::time::sleep(idle_pause(step.idle, asked.elapsed())).await;
        }
        None
    }

    /// The last answer read: the task's status and whether it has ended.
    pub fn last(&self) -> Option<&TaskOutput> {
        self.last.as_ref()
    }

    /// The task followed.
    pub fn task_id(&self) -> Uuid {
        self.id
    }
}

impl Client {
    /// Follow the task's answer from its start as the model writes it (long polls of 20 s), to
    /// the end of its last segment once the task has ended: see [`OutputFollower`].
    pub fn follow_output(&self, id: Uuid) -> OutputFollower {
        OutputFollower::new(self.clone(), id, FollowOptions::default())
    }

    /// [`Client::follow_output`] from a place (a reconnect) and with waits of its own.
    pub fn follow_output_with(&self, id: Uuid, options: FollowOptions) -> OutputFollower {
        OutputFollower::new(self.clone(), id, options)
    }

    /// [`Client::follow_output`] as a [`Stream`]; it ends after the first error.
    pub fn output_stream(
        &self,
        id: Uuid,
        options: FollowOptions,
    ) -> impl Stream<Item = Result<OutputPiece, Error>> + Send + 'static {
        stream::unfold(self.follow_output_with(id, options), |mut follower| async move {
            follower.next().await.map(|item| (item, follower))
        })
    }
}

#[cfg(test)]
mod tests {
    use aitasks_contracts::TaskStatus;

    use super::*;

    fn answer(segment: Option<i32>, from: i64, text: &str, is_final: bool, ended: bool) -> TaskOutput {
        TaskOutput {
            task_id: Uuid::nil(),
            status: if ended { TaskStatus::Succeeded } else { TaskStatus::Running },
            ended,
            segment,
            attempt: segment.map(|s| s.min(2)),
            from,
            text: text.to_owned(),
            next: from + text.chars().count() as i64,
            is_final,
        }
    }

    /// A follower whose reads do not wait (`wait: 0`) used to read again at once after each
    /// idle answer: a loop of requests with no bound while the task ran.
    #[test]
    fn an_idle_answer_pauses_the_next_read_whatever_the_wait() {
        assert_eq!(idle_pause(true, Duration::ZERO), OUTPUT_IDLE_PAUSE, "a read that did not wait");
        assert_eq!(idle_pause(true, Duration::from_millis(400)), Duration::from_millis(600));
        assert_eq!(idle_pause(true, Duration::from_secs(20)), Duration::ZERO, "a read held its wait");
        assert_eq!(idle_pause(false, Duration::ZERO), Duration::ZERO, "news: read on at once");
    }

    #[test]
    fn text_follows_on_and_the_place_moves_by_characters() {
        let mut place = Place::starting(&FollowOptions::default());
        assert_eq!(place.read(Duration::ZERO), ReadOutput::default());
        let step = place.take(&answer(Some(1), 0, "{\"text\": \"hé", false, false));
        assert_eq!(
            step.piece.as_ref().map(|p| (p.text.as_str(), p.restarted, p.next)),
            Some(("{\"text\": \"hé", false, 12))
        );
        assert!(!step.done);
        assert_eq!(
            place.read(Duration::ZERO),
            ReadOutput { segment: Some(1), after: 12, wait: Duration::ZERO }
        );
        let end = place.take(&answer(Some(1), 12, "llo\"}", true, true));
        assert!(end.done && end.piece.is_some());
    }

    #[test]
    fn a_new_segment_after_text_is_a_restart_and_one_before_any_is_not() {
        let mut place = Place::starting(&FollowOptions::default());
        assert_eq!(place.take(&answer(Some(1), 0, "", false, false)).piece, None, "no text yet");
        let first = place.take(&answer(Some(2), 0, "abc", false, false)).piece.unwrap();
        assert!(!first.restarted, "nothing to drop");
        let again = place.take(&answer(Some(3), 0, "", false, false)).piece.unwrap();
        assert!(again.restarted && again.text.is_empty() && again.segment == 3);
        let on = place.take(&answer(Some(3), 0, "x", false, false)).piece.unwrap();
        assert!(!on.restarted);
    }

    #[test]
    fn a_resumed_reader_is_told_when_its_segment_is_gone() {
        let options = FollowOptions { segment: Some(1), after: 5, ..FollowOptions::default() };
        let mut place = Place::starting(&options);
        assert_eq!(place.read(Duration::ZERO).after, 5);
        let step = place.take(&answer(Some(2), 0, "new", false, false));
        assert!(step.piece.unwrap().restarted);
    }

    #[test]
    fn it_ends_only_once_the_task_has_ended_and_its_stream_is_read() {
        let mut place = Place::starting(&FollowOptions::default());
        let idle = place.take(&answer(None, 0, "", false, false));
        assert!(idle.idle && !idle.done);
        assert!(!place.take(&answer(Some(1), 0, "ab", true, false)).done, "a repair may follow");
        let quiet = place.take(&answer(Some(1), 2, "", true, false));
        assert!(quiet.idle && quiet.piece.is_none(), "nothing new since");
        assert!(!place.take(&answer(Some(1), 2, "cd", false, true)).done, "cut: more to read");
        assert!(place.take(&answer(Some(1), 4, "", false, true)).done, "nothing past the end");
        assert!(Place::default().take(&answer(None, 0, "", false, true)).done, "no stream");
    }
}
