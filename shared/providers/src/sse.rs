//! A streamed answer (`text/event-stream`) read as server-sent events, bounded: what a provider
//! streams is input like any other. A line is decoded only once it is whole, so a character cut
//! between two chunks is put back together, and a line that is not UTF-8 is a malformed answer;
//! a line over [`MAX_EVENT_LINE_BYTES`] or a stream over the response bound ends the call
//! malformed, never a function's memory. The call's timeout bounds the whole stream, so one that
//! stalls midway ends as a stall always has ([`ProviderError::Timeout`]).

use serde_json::Value;

use crate::error::ProviderError;
use crate::wire::{json_body, read_bounded, sent, transport_error, Call, MAX_RESPONSE_BYTES};

/// The longest line of a stream: more than any answer's one event carries (an answer is at most
/// 4,000,000 bytes, escaped at most twice over), far less than the stream's bound.
pub(crate) const MAX_EVENT_LINE_BYTES: usize = 8 * 1024 * 1024;

/// One event: its `event:` name, if it has one, and its `data:` lines joined.
pub(crate) struct Event {
    pub name: Option<String>,
    pub data: String,
}

/// What reads a format's events into the answer a whole call would have given, telling the
/// call's tap the text as it comes.
pub(crate) trait Assemble {
    /// One event; `false` once the stream says it is over (OpenAI's `[DONE]`).
    fn event(&mut self, call: &Call<'_>, event: Event) -> Result<bool, ProviderError>;
    /// The answer, as the format's whole-answer reader reads it.
    fn answer(self) -> Result<Value, ProviderError>;
}

/// Send a call that asked for a stream and read its answer: streamed events through `assemble`,
/// or, from a server that answered with one JSON body instead, that body.
pub(crate) async fn streamed_answer(
    call: &Call<'_>,
    request: reqwest::RequestBuilder,
    mut assemble: impl Assemble,
) -> Result<Value, ProviderError> {
    let response = sent(call, request).await?;
    let streams = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().to_ascii_lowercase().starts_with("text/event-stream"));
    if !streams {
        let text = read_bounded(response, MAX_RESPONSE_BYTES, call.timeout, call.profile).await?;
        return json_body(call, text);
    }
    let mut events = Events::new(response);
    while let Some(event) = events.next(call).await? {
        if !assemble.event(call, event)? {
            break;
        }
    }
    assemble.answer()
}

/// The events of a streamed body, one at a time.
struct Events {
    response: reqwest::Response,
    /// Bytes read and not yet a whole line, from `start` on: the lines before it were taken
    /// (taking one moves nothing; what is left is moved to the front once per read).
    pending: Vec<u8>,
    start: usize,
    /// How much of `pending` is known to hold no line end.
    scanned: usize,
    /// Bytes read in all.
    read: usize,
    name: Option<String>,
    data: Option<String>,
    ended: bool,
}

impl Events {
    fn new(response: reqwest::Response) -> Events {
        Events {
            response,
            pending: Vec::new(),
            start: 0,
            scanned: 0,
            read: 0,
            name: None,
            data: None,
            ended: false,
        }
    }

    async fn next(&mut self, call: &Call<'_>) -> Result<Option<Event>, ProviderError> {
        loop {
            let from = self.start.max(self.scanned);
            if let Some(at) = self.pending[from..].iter().position(|b| *b == b'\n') {
                let end = from + at;
                let line = self.pending[self.start..end].to_vec();
                self.start = end + 1;
                self.scanned = self.start;
                if let Some(event) = self.line(&line)? {
                    return Ok(Some(event));
                }
                continue;
            }
            self.scanned = self.pending.len();
            if self.pending.len() - self.start > MAX_EVENT_LINE_BYTES {
                return Err(ProviderError::Malformed(format!(
                    "a line of the streamed answer is over {MAX_EVENT_LINE_BYTES} bytes; the rest was not read"
                )));
            }
            if self.ended {
                // A last event without its blank line still counts; a partial line is dropped.
                return Ok(self.dispatch());
            }
            match self.response.chunk().await.map_err(|e| transport_error(e, call.timeout, call.profile))? {
                Some(chunk) => {
                    self.read += chunk.len();
                    if self.read > MAX_RESPONSE_BYTES {
                        return Err(ProviderError::Malformed(format!(
                            "the streamed answer is over {MAX_RESPONSE_BYTES} bytes; the rest was not read"
                        )));
                    }
                    self.pending.drain(..self.start);
                    self.scanned -= self.start;
                    self.start = 0;
                    self.pending.extend_from_slice(&chunk);
                }
                None => self.ended = true,
            }
        }
    }

    /// One whole line (without its `\n`): an event when it is the blank line ending one.
    fn line(&mut self, line: &[u8]) -> Result<Option<Event>, ProviderError> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        let line = std::str::from_utf8(line)
            .map_err(|_| ProviderError::Malformed("a line of the streamed answer is not UTF-8".into()))?;
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(data) => {
                    if data.len() + value.len() > MAX_EVENT_LINE_BYTES {
                        return Err(ProviderError::Malformed(format!(
                            "an event of the streamed answer is over {MAX_EVENT_LINE_BYTES} bytes"
                        )));
                    }
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "event" => self.name = Some(value.to_owned()),
            // A comment (`: keep-alive`), `id`, `retry`, or a field no format uses.
            _ => {}
        }
        Ok(None)
    }

    fn dispatch(&mut self) -> Option<Event> {
        let name = self.name.take();
        self.data.take().map(|data| Event { name, data })
    }
}

/// An event's data as JSON, or the malformed answer it is.
pub(crate) fn event_json(event: &Event) -> Result<Value, ProviderError> {
    serde_json::from_str(&event.data)
        .map_err(|_| ProviderError::Malformed("an event of the streamed answer is not JSON".into()))
}
