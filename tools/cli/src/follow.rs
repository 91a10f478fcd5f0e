//! `wait --follow`: a task's answer printed as the model writes it (live output), then the end
//! exactly as `wait` prints it.

use std::io::Write;
use std::time::Duration;

use aitasks_client::{Client, OutputPiece};
use tokio::time::Instant;
use uuid::Uuid;

use crate::failure::Failure;
use crate::output;
use crate::shown;
use crate::tasks::{succeeded, waiting};

/// Where the printed text stands: whether its last line is open (a newline goes before a
/// marker or the task).
#[derive(Default)]
struct Printed {
    open_line: bool,
}

impl Printed {
    fn piece(&mut self, piece: &OutputPiece, json: bool) {
        if json {
            output::json_line(piece);
            return;
        }
        if piece.restarted {
            self.end_line();
            eprintln!(
                "--- attempt {} (segment {}): the answer starts over ---",
                piece.attempt, piece.segment
            );
        }
        if piece.text.is_empty() {
            return;
        }
        let mut out = std::io::stdout().lock();
        // The model's answer: its control characters escaped, never sent to the terminal raw.
        let _ = out.write_all(shown::block(&piece.text).as_bytes());
        let _ = out.flush();
        self.open_line = !piece.text.ends_with('\n');
    }

    fn end_line(&mut self) {
        if std::mem::take(&mut self.open_line) {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(b"\n");
            let _ = out.flush();
        }
    }
}

/// Follow the task's live output until it has ended (or `seconds` pass), then wait for it as
/// `wait` does with what is left of the time: the same output and exit status.
pub(crate) async fn wait(client: &Client, id: Uuid, seconds: u64, json: bool) -> Result<(), Failure> {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut follower = client.follow_output(id);
    let mut printed = Printed::default();
    while let Ok(Some(piece)) = tokio::time::timeout_at(deadline, follower.next()).await {
        printed.piece(&piece?, json);
    }
    printed.end_line();
    let left = deadline.saturating_duration_since(Instant::now());
    let task = waiting(client, id, left.as_secs(), json).await?;
    if json {
        output::json_line(&task);
    } else {
        output::task(&task);
    }
    succeeded(&task)
}
