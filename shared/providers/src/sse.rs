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

/// The events of a streamed body, one at a time. Lines are read in place: a chunk's bytes are
/// copied once into `pending`, each line is a slice of it, and only the part line of a chunk
/// moves when the next is read.
struct Events {
    response: reqwest::Response,
    /// Bytes read; those before `start` are consumed.
    pending: Vec<u8>,
    start: usize,
    /// Where the search for the next line end resumes (what lies between `start` and it has none).
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
            if let Some(at) = self.pending[self.scanned..].iter().position(|b| *b == b'\n') {
                let end = self.scanned + at;
                let line = &self.pending[self.start..end];
                let blank = field(line, &mut self.name, &mut self.data)?;
                self.start = end + 1;
                self.scanned = self.start;
                if blank {
                    if let Some(event) = self.dispatch() {
                        return Ok(Some(event));
                    }
                }
                continue;
            }
            // No whole line left: keep only the part line, before reading more.
            self.pending.drain(..self.start);
            self.start = 0;
            self.scanned = self.pending.len();
            if self.pending.len() > MAX_EVENT_LINE_BYTES {
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
                    self.pending.extend_from_slice(&chunk);
                }
                None => self.ended = true,
            }
        }
    }

    fn dispatch(&mut self) -> Option<Event> {
        let name = self.name.take();
        self.data.take().map(|data| Event { name, data })
    }
}

/// One whole line (without its `\n`) into the event being read: `true` when it is the blank line
/// that ends one.
fn field(line: &[u8], name: &mut Option<String>, data: &mut Option<String>) -> Result<bool, ProviderError> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.is_empty() {
        return Ok(true);
    }
    let line = std::str::from_utf8(line)
        .map_err(|_| ProviderError::Malformed("a line of the streamed answer is not UTF-8".into()))?;
    let (field, value) = match line.split_once(':') {
        Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
        None => (line, ""),
    };
    match field {
        "data" => match data {
            Some(data) => {
                if data.len() + value.len() > MAX_EVENT_LINE_BYTES {
                    return Err(ProviderError::Malformed(format!(
                        "an event of the streamed answer is over {MAX_EVENT_LINE_BYTES} bytes"
                    )));
                }
                data.push('\n');
                data.push_str(value);
            }
            None => *data = Some(value.to_owned()),
        },
        "event" => *name = Some(value.to_owned()),
        // A comment (`: keep-alive`), `id`, `retry`, or a field no format uses.
        _ => {}
    }
    Ok(false)
}

/// An event's data as JSON, or the malformed answer it is.
pub(crate) fn event_json(event: &Event) -> Result<Value, ProviderError> {
    serde_json::from_str(&event.data)
        .map_err(|_| ProviderError::Malformed("an event of the streamed answer is not JSON".into()))
}
