//! A finished batch's results read as a stream, a page at a time: whatever the files' sizes, at
//! most one line ([`MAX_RESULT_LINE_BYTES`]) and one page ([`PAGE_LINES`] lines, about
//! [`PAGE_BYTES`] of them) are held, so the caller settles each page before the next is read
//! and a read that fails part way keeps what was settled before it.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use aitasks_contracts::AiRequest;
use uuid::Uuid;

use super::format::BatchFormat;
use super::line::{LineOutcome, LineResult, MAX_RESULT_LINE_BYTES};
use super::splitter::{Line, Splitter};
use crate::error::ProviderError;
use crate::profiles::ModelProfile;
use crate::wire::next_chunk;

/// The most lines one page holds.
pub const PAGE_LINES: usize = 500;
/// A page ends once its lines hold this many bytes (as read): what the caller holds at once.
pub const PAGE_BYTES: usize = 4 * 1024 * 1024;

/// One file still to read, or one of the batch's `results` whose files are still to list.
enum Source {
    File(String),
    Results(String),
}

/// The results of a batch, read page by page ([`ResultReader::next_page`]): every line of the
/// batch's tasks (those in the `requests` it was made with), in the files' order, duplicates
/// passed on; a line naming no task of them is left out (counted in one log line a read).
pub struct ResultReader<'a> {
    format: Box<dyn BatchFormat + 'a>,
    profile: &'a ModelProfile,
    /// How long a chunk of a file may take to arrive.
    timeout: Duration,
    requests: &'a HashMap<Uuid, AiRequest>,
    to_read: VecDeque<Source>,
    open: Option<(reqwest::Response, Splitter)>,
    /// Lines read but not yet handed out.
    lines: VecDeque<Line>,
    left_out: u64,
}

impl<'a> ResultReader<'a> {
    pub(super) fn new(
        format: Box<dyn BatchFormat + 'a>,
        profile: &'a ModelProfile,
        timeout: Duration,
        phase_results: &[String],
        requests: &'a HashMap<Uuid, AiRequest>,
    ) -> ResultReader<'a> {
        let to_read = phase_results.iter().map(|results| Source::Results(results.clone())).collect();
        ResultReader {
            format,
            profile,
            timeout,
            requests,
            to_read,
            open: None,
            lines: VecDeque::new(),
            left_out: 0,
        }
    }

    /// The next page of results, `None` once every file is read. An error ends the read (a
    /// file the provider would not give, a transfer cut); the pages before it stand.
    pub async fn next_page(&mut self) -> Result<Option<Vec<LineResult>>, ProviderError> {
        let mut page = Vec::new();
        let mut bytes = 0;
        loop {
            while let Some(line) = self.lines.pop_front() {
                if let Some((result, size)) = self.result_of(line) {
                    page.push(result);
                    bytes += size;
                    if page.len() >= PAGE_LINES || bytes >= PAGE_BYTES {
                        return Ok(Some(page));
                    }
                }
            }
            if let Some((response, splitter)) = &mut self.open {
                match next_chunk(response, self.timeout, self.profile).await? {
                    Some(chunk) => splitter.feed(chunk.as_ref(), &mut self.lines),
                    None => {
                        splitter.finish(&mut self.lines);
                        self.open = None;
                    }
                }
                continue;
            }
            match self.to_read.pop_front() {
                Some(source) => self.start(source).await?,
                None => {
                    self.read_to_the_end();
                    return Ok((!page.is_empty()).then_some(page));
                }
            }
        }
    }

    /// Every page at once (the provider tests; the batcher settles page by page).
    pub async fn all(mut self) -> Result<Vec<LineResult>, ProviderError> {
        let mut out = Vec::new();
        while let Some(page) = self.next_page().await? {
            out.extend(page);
        }
        Ok(out)
    }

    /// Open a file, or list the files of one of the batch's results to read next.
    async fn start(&mut self, source: Source) -> Result<(), ProviderError> {
        match source {
            Source::Results(results) => {
                let files = self.format.result_files(&results).await?;
                self.to_read.extend(files.into_iter().map(Source::File));
            }
            Source::File(file) => {
                let response = self.format.open(&file).await?;
                self.open = Some((response, Splitter::new(self.format.id_field())));
            }
        }
        Ok(())
    }

    /// A line's result and the bytes it counts for, when it names a task of the batch.
    fn result_of(&mut self, line: Line) -> Option<(LineResult, usize)> {
        let key = self.format.id_field();
        let found = match &line {
            Line::Json(value, _) => known(value[key].as_str(), self.requests),
            Line::Unreadable { id, .. } => known(id.as_deref(), self.requests),
        };
        let Some((task_id, request)) = found else {
            self.left_out += 1;
            return None;
        };
        let (outcome, size) = match line {
            Line::Json(value, size) => (self.format.outcome(&value, request), size),
            Line::Unreadable { too_long: true, .. } => (too_long(), 0),
            Line::Unreadable { .. } => {
                (LineOutcome::Failed(ProviderError::Malformed("a batch result line is not JSON".into())), 0)
            }
        };
        Some((LineResult { task_id, outcome }, size))
    }

    /// Every file read to its end: the lines they had for tasks no longer (or never) in the batch.
    fn read_to_the_end(&mut self) {
        if self.left_out > 0 {
            // Settled by an earlier read of the same files, canceled, or not the batch's at all.
            tracing::info!(
                lines = self.left_out,
                "batch result lines naming no task still in the batch; left out"
            );
        }
        self.left_out = 0;
    }
}

/// The task a line names, when it is one of the batch's.
fn known<'r>(id: Option<&str>, requests: &'r HashMap<Uuid, AiRequest>) -> Option<(Uuid, &'r AiRequest)> {
    let task_id = Uuid::parse_str(id?).ok()?;
    requests.get(&task_id).map(|request| (task_id, request))
}

/// A line's outcome for a line that was over [`MAX_RESULT_LINE_BYTES`].
fn too_long() -> LineOutcome {
    LineOutcome::Failed(ProviderError::Malformed(format!(
        "the batch result line is over {MAX_RESULT_LINE_BYTES} bytes; it was not read"
    )))
}
