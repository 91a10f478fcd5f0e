//! A stub LLM provider: a real HTTP/1.1 server speaking the OpenAI chat-completions wire format.
//! Replies are scripted (a queue, then a default); every request is recorded, and a client that
//! hangs up before its answer is written counts as an aborted request. A reply answers as one
//! JSON body whatever the request's `stream` (as a server that cannot stream does), unless it
//! is [`Reply::Streamed`] or [`Reply::RawStream`]: server-sent events (a [`Reply::Stamped`]
//! streams when the request asks it to).
//!
//! It is written on plain TCP, not a mocking library, so that it can notice a client that goes
//! away mid-answer (what a cancellation must do).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A valid answer built from the request's schema.
    Auto,
    /// This answer object (as the message content).
    Answer(Value),
    /// A valid answer built from the request's schema, its free text fields (and a
    /// `generate_text`'s text) `chars` times `fill`: at the request's `maxLength`, the largest
    /// answer the checker takes, as a provider ignoring `max_tokens` can send. (A strict-mode
    /// schema carries no `maxLength` to read it from.)
    Filled { fill: char, chars: usize },
    /// Message content that is not even JSON.
    Content(String),
    /// An HTTP error with a body; `retry_after` adds the header.
    Status { status: u16, body: String, retry_after: Option<u64> },
    /// A 200 whose body is not JSON at all.
    Garbage,
    /// Wait, then answer as the inner reply would.
    Slow(Duration, Box<Reply>),
    /// One of these, picked at random by weight for each request (fault injection).
    OneOf(Vec<(u32, Reply)>),
    /// The inner reply's answer streamed as OpenAI's server-sent events (`chat.completion.chunk`
    /// deltas of `piece_chars` characters, one every `every`, then the finish, the usage and
    /// `[DONE]`), whatever the request asked.
    Streamed { inner: Box<Reply>, piece_chars: usize, every: Duration },
    /// A `text/event-stream` body of exactly these bytes, each piece written after its pause: a
    /// hostile or stalling stream.
    RawStream(Vec<(Duration, Vec<u8>)>),
    /// `then` for a request whose body contains `needle` (a task's prompt, in every turn of its
    /// conversation), `otherwise` for the others: one task's replies, whatever the order of the
    /// requests of tasks running beside it.
    Matching { needle: String, then: Box<Reply>, otherwise: Box<Reply> },
    /// A `generate_text` answer (`{"text": "…"}`) of `pieces` pieces, one every `every`, whose
    /// text each says when it was written: `@` and the microseconds since the Unix epoch at
    /// that moment, then a space ([`stamps_in`] reads them back). A reader of the task's live
    /// output that reads a piece knows how long it took to reach it (the benchmark's "provider
    /// chunk to reader"). Streamed (as [`Reply::Streamed`] is) when the request asks
    /// `stream: true`; otherwise the whole answer, as long and as late (every piece stamped
    /// when it is written).
    Stamped { pieces: usize, every: Duration },
}

impl Reply {
    pub fn status(status: u16) -> Reply {
        Reply::Status {
            status,
            body: format!("{{\"error\": {{\"message\": \"stub {status}\"}}}}"),
            retry_after: None,
        }
    }

    pub fn slow(delay: Duration) -> Reply {
        Reply::Slow(delay, Box::new(Reply::Auto))
    }

    /// A valid answer streamed `piece_chars` characters every `every`.
    pub fn streamed(piece_chars: usize, every: Duration) -> Reply {
        Reply::Streamed { inner: Box::new(Reply::Auto), piece_chars, every }
    }
}

/// The microseconds since the Unix epoch now: the stamp of a [`Reply::Stamped`] piece, and the
/// clock its reader compares it with.
pub fn epoch_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// The stamps of the whole [`Reply::Stamped`] pieces in `text` (a piece cut short at its end is
/// not one), in order.
pub fn stamps_in(text: &str) -> Vec<u64> {
    let mut stamps = Vec::new();
    for piece in text.split('@').skip(1) {
        if let Some((digits, _)) = piece.split_once(' ') {
            if let Ok(stamp) = digits.parse() {
                stamps.push(stamp);
            }
        }
    }
    stamps
}

/// One stamped piece's text: written at `micros`.
fn stamp(micros: u64) -> String {
    format!("@{micros} ")
}

#[derive(Default)]
struct State {
    /// Picks [`Reply::OneOf`] choices; seeded at start.
    random: Option<crate::Xorshift>,
    script: VecDeque<Reply>,
    default: Option<Reply>,
    requests: Vec<Value>,
    /// The headers of each request, as sent (names lower-cased).
    headers: Vec<Vec<(String, String)>>,
    aborted: usize,
    completed: usize,
    /// Requests being answered now, and the most there ever were at once.
    in_flight: usize,
    peak_in_flight: usize,
}

/// The stub server. Dropping it stops accepting connections.
pub struct StubProvider {
    pub base_url: String,
    state: Arc<Mutex<State>>,
    accept: tokio::task::JoinHandle<()>,
}

impl Drop for StubProvider {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl StubProvider {
    pub async fn start() -> StubProvider {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the stub provider");
        let address = listener.local_addr().expect("local address");
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9e37_79b9_7f4a_7c15);
        let state =
            Arc::new(Mutex::new(State { random: Some(crate::Xorshift::new(seed)), ..State::default() }));
        let shared = state.clone();
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                // Head and body go out in two writes: without this, Nagle and delayed ACKs
                // would add ~40 ms to every answer.
                let _ = stream.set_nodelay(true);
                tokio::spawn(serve(stream, shared.clone()));
            }
        });
        StubProvider { base_url: format!("http://{address}/v1"), state, accept }
    }

    /// Replies for the next requests, in order; afterwards the default applies.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.state.lock().expect("stub state").script.extend(replies);
    }

    /// The reply once the script is used up (`Reply::Auto` unless set).
    pub fn set_default(&self, reply: Reply) {
        self.state.lock().expect("stub state").default = Some(reply);
    }

    /// Requests received so far (their JSON bodies).
    pub fn requests(&self) -> Vec<Value> {
        self.state.lock().expect("stub state").requests.clone()
    }

    /// The `Authorization` header of each request so far (`None` where there was none).
    pub fn authorizations(&self) -> Vec<Option<String>> {
        self.header_values("authorization")
    }

    /// The header `name` (any case) of each request so far (`None` where there was none).
    pub fn header_values(&self, name: &str) -> Vec<Option<String>> {
        let state = self.state.lock().expect("stub state");
        state
            .headers
            .iter()
            .map(|headers| headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.clone()))
            .collect()
    }

    pub fn calls(&self) -> usize {
        self.state.lock().expect("stub state").requests.len()
    }

    /// Requests whose client went away before the answer was written.
    pub fn aborted(&self) -> usize {
        self.state.lock().expect("stub state").aborted
    }

    /// The most requests the stub was answering at the same time.
    pub fn peak_in_flight(&self) -> usize {
        self.state.lock().expect("stub state").peak_in_flight
    }

    /// Answers fully written.
    pub fn completed(&self) -> usize {
        self.state.lock().expect("stub state").completed
    }
}

async fn serve(mut stream: TcpStream, state: Arc<Mutex<State>>) {
    let mut buffer = Vec::new();
    loop {
        let Some((head_len, body_len)) = read_head(&mut stream, &mut buffer).await else { return };
        while buffer.len() < head_len + body_len {
            let mut chunk = [0u8; 8192];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        let body: Value =
            serde_json::from_slice(&buffer[head_len..head_len + body_len]).unwrap_or(Value::Null);
        let headers = header_lines(&buffer[..head_len]);
        buffer.drain(..head_len + body_len);
        let reply = {
            let mut state = state.lock().expect("stub state");
            state.requests.push(body.clone());
            state.headers.push(headers);
            state.in_flight += 1;
            state.peak_in_flight = state.peak_in_flight.max(state.in_flight);
            let default = state.default.clone().unwrap_or(Reply::Auto);
            let reply = state.script.pop_front().unwrap_or(default);
            let random = state.random.get_or_insert_with(|| crate::Xorshift::new(7));
            pick(reply, random, &body)
        };
        // However the request ends, it is no longer in flight.
        let _in_flight = InFlight(state.clone());
        let (delay, reply) = unwrap_delay(reply);
        let (delay, reply) = match reply {
            Reply::Stamped { pieces, every } if body["stream"] != true => {
                (delay + every * pieces as u32, Reply::Stamped { pieces, every })
            }
            other => (delay, other),
        };
        if !delay.is_zero() {
            // Wait for the delay, or notice the client hanging up.
            let mut probe = [0u8; 1];
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                read = stream.read(&mut probe) => {
                    if matches!(read, Ok(0) | Err(_)) {
                        state.lock().expect("stub state").aborted += 1;
                        return;
                    }
                    buffer.push(probe[0]);
                }
            }
        }
        if let Some(pieces) = stream_pieces(&reply, &body) {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
            if stream.write_all(head.as_bytes()).await.is_err() {
                state.lock().expect("stub state").aborted += 1;
                return;
            }
            for (pause, piece) in pieces {
                if !pause.is_zero() {
                    tokio::time::sleep(pause).await;
                }
                let piece = match piece {
                    Piece::Bytes(bytes) => bytes,
                    Piece::Stamp => event(delta(json!({"content": stamp(epoch_micros())}), Value::Null)),
                };
                if stream.write_all(&piece).await.is_err() || stream.flush().await.is_err() {
                    state.lock().expect("stub state").aborted += 1;
                    return;
                }
            }
            state.lock().expect("stub state").completed += 1;
            // The body ends with the connection.
            return;
        }
        let (status, extra_headers, response_body) = render(&reply, &body);
        let head = format!(
            "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{extra_headers}connection: keep-alive\r\n\r\n",
            reason(status),
            response_body.len()
        );
        if stream.write_all(head.as_bytes()).await.is_err()
            || stream.write_all(response_body.as_bytes()).await.is_err()
        {
            state.lock().expect("stub state").aborted += 1;
            return;
        }
        state.lock().expect("stub state").completed += 1;
    }
}

struct InFlight(Arc<Mutex<State>>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        state.in_flight = state.in_flight.saturating_sub(1);
    }
}

/// A request head's headers: names lower-cased, values as sent.
fn header_lines(head: &[u8]) -> Vec<(String, String)> {
    String::from_utf8_lossy(head)
        .lines()
        .skip(1)
        .filter_map(|line| {
            let (key, value) = line.split_once(':')?;
            Some((key.trim().to_ascii_lowercase(), value.trim().to_owned()))
        })
        .collect()
}

/// Read until the end of the headers; `(head length, content length)`.
async fn read_head(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<(usize, usize)> {
    loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).to_lowercase();
            let length = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            return Some((end + 4, length));
        }
        let mut chunk = [0u8; 8192];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Resolve [`Reply::OneOf`] and [`Reply::Matching`] (at any depth) to one concrete reply.
fn pick(reply: Reply, random: &mut crate::Xorshift, request: &Value) -> Reply {
    match reply {
        Reply::Matching { needle, then, otherwise } => {
            let chosen = if request.to_string().contains(&needle) { then } else { otherwise };
            pick(*chosen, random, request)
        }
        Reply::OneOf(choices) => {
            let total: u64 = choices.iter().map(|(weight, _)| u64::from(*weight)).sum();
            let mut roll = random.below(total);
            for (weight, choice) in choices {
                if roll < u64::from(weight) {
                    return pick(choice, random, request);
                }
                roll -= u64::from(weight);
            }
            Reply::Auto
        }
        Reply::Slow(delay, inner) => Reply::Slow(delay, Box::new(pick(*inner, random, request))),
        other => other,
    }
}

fn unwrap_delay(reply: Reply) -> (Duration, Reply) {
    match reply {
        Reply::Slow(delay, inner) => {
            let (more, reply) = unwrap_delay(*inner);
            (delay + more, reply)
        }
        other => (Duration::ZERO, other),
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

fn completion(content: String) -> String {
    json!({
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "model": "stub-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    })
    .to_string()
}

/// A piece of a streamed body: these bytes, or a [`Reply::Stamped`] piece, made when written.
enum Piece {
    Bytes(Vec<u8>),
    Stamp,
}

/// One server-sent event.
fn event(chunk: Value) -> Vec<u8> {
    format!("data: {chunk}\n\n").into_bytes()
}

/// A `chat.completion.chunk` with this delta.
fn delta(delta: Value, finish: Value) -> Value {
    json!({"id": "chatcmpl-stub", "object": "chat.completion.chunk", "model": "stub-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

/// A streamed reply's body, piece by piece with the pause before each; `None` for a whole one.
fn stream_pieces(reply: &Reply, request: &Value) -> Option<Vec<(Duration, Piece)>> {
    let opening = || {
        (Duration::ZERO, Piece::Bytes(event(delta(json!({"role": "assistant", "content": ""}), Value::Null))))
    };
    let closing = || {
        [
            event(delta(json!({}), json!("stop"))),
            event(json!({"id": "chatcmpl-stub", "object": "chat.completion.chunk", "model": "stub-model", "choices": [],
                "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})),
            b"data: [DONE]\n\n".to_vec(),
        ]
        .map(|bytes| (Duration::ZERO, Piece::Bytes(bytes)))
    };
    match reply {
        Reply::RawStream(pieces) => {
            Some(pieces.iter().map(|(pause, bytes)| (*pause, Piece::Bytes(bytes.clone()))).collect())
        }
        Reply::Streamed { inner, piece_chars, every } => {
            let (_, _, whole) = render(inner, request);
            let whole: Value = serde_json::from_str(&whole).unwrap_or(Value::Null);
            let content = whole.pointer("/choices/0/message/content").and_then(Value::as_str).unwrap_or("");
            let characters: Vec<char> = content.chars().collect();
            let mut pieces = vec![opening()];
            for piece in characters.chunks((*piece_chars).max(1)) {
                let text: String = piece.iter().collect();
                pieces.push((*every, Piece::Bytes(event(delta(json!({"content": text}), Value::Null)))));
            }
            pieces.extend(closing());
            Some(pieces)
        }
        Reply::Stamped { pieces: count, every } if request["stream"] == true => {
            let text = |text: &str| Piece::Bytes(event(delta(json!({"content": text}), Value::Null)));
            let mut pieces = vec![opening(), (Duration::ZERO, text("{\"text\": \""))];
            pieces.extend((0..*count).map(|_| (*every, Piece::Stamp)));
            pieces.push((Duration::ZERO, text("\"}")));
            pieces.extend(closing());
            Some(pieces)
        }
        _ => None,
    }
}

fn render(reply: &Reply, request: &Value) -> (u16, String, String) {
    match reply {
        Reply::Auto => (200, String::new(), completion(auto_answer(request).to_string())),
        Reply::Filled { fill, chars } => {
            (200, String::new(), completion(filled_answer(request, *fill, *chars).to_string()))
        }
        Reply::Answer(answer) => (200, String::new(), completion(answer.to_string())),
        Reply::Content(text) => (200, String::new(), completion(text.clone())),
        Reply::Garbage => (200, String::new(), "<html>upstream error</html>".to_owned()),
        Reply::Status { status, body, retry_after } => {
            let header = retry_after.map(|s| format!("retry-after: {s}\r\n")).unwrap_or_default();
            (*status, header, body.clone())
        }
        Reply::Slow(_, inner) | Reply::Streamed { inner, .. } => render(inner, request),
        Reply::RawStream(_) => (200, String::new(), String::new()),
        // Not streamed: every piece, written now.
        Reply::Stamped { pieces, .. } => {
            let now = stamp(epoch_micros());
            (200, String::new(), completion(json!({"text": now.repeat(*pieces)}).to_string()))
        }
        Reply::OneOf(_) | Reply::Matching { .. } => unreachable!("resolved by pick before rendering"),
    }
}

/// A valid answer for the request's answer schema: the first choice, one item, a date-time, a
/// short text.
pub(crate) fn auto_answer(request: &Value) -> Value {
    answer_for_schema(&request["response_format"]["json_schema"]["schema"])
}

/// [`auto_answer`] with every free text (a string without `enum` or `format`) `chars` of `fill`.
fn filled_answer(request: &Value, fill: char, chars: usize) -> Value {
    let schema = &request["response_format"]["json_schema"]["schema"];
    let mut answer = auto_answer(request);
    if let (Some(fields), Some(properties)) = (answer.as_object_mut(), schema["properties"].as_object()) {
        for (name, property) in properties {
            let text = property["type"] == "string" || property["type"][0] == "string";
            if text && property["enum"].is_null() && property["format"].is_null() {
                fields.insert(name.clone(), Value::String(fill.to_string().repeat(chars)));
            }
        }
    }
    answer
}

/// A valid answer for an answer schema (the one [`auto_answer`] reads from a chat request; the
/// batch stubs read it from each line's body in its provider's shape).
pub(crate) fn answer_for_schema(schema: &Value) -> Value {
    let mut answer = serde_json::Map::new();
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            let kind = property["type"].as_str().or_else(|| property["type"][0].as_str()).unwrap_or("string");
            let value = if let Some(first) = property["enum"].get(0) {
                first.clone()
            } else if kind == "array" {
                json!([property["items"]["enum"][0]])
            } else if property["format"] == "date-time" {
                json!("2026-11-29T12:00:00Z")
            } else {
                match kind {
                    "number" => json!(42),
                    "boolean" => json!(true),
                    _ => json!("stub text"),
                }
            };
            answer.insert(name.clone(), value);
        }
    }
    Value::Object(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The content a chat-completions answer carries: the deltas of a streamed one, joined.
    fn content_of(body: &str) -> String {
        if let Ok(whole) = serde_json::from_str::<Value>(body) {
            return whole["choices"][0]["message"]["content"].as_str().unwrap_or_default().to_owned();
        }
        body.lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .filter_map(|data| serde_json::from_str::<Value>(data).ok())
            .filter_map(|chunk| chunk["choices"][0]["delta"]["content"].as_str().map(str::to_owned))
            .collect()
    }

    async fn ask(stub: &StubProvider, stream: bool) -> (String, String) {
        let answer = reqwest::Client::new()
            .post(format!("{}/chat/completions", stub.base_url))
            .json(&json!({"model": "stub-model", "stream": stream}))
            .send()
            .await
            .expect("the stub answers");
        let kind = answer.headers()["content-type"].to_str().unwrap_or_default().to_owned();
        (kind, content_of(&answer.text().await.expect("a body")))
    }

    #[test]
    fn only_whole_stamped_pieces_are_read() {
        assert_eq!(stamps_in("{\"text\": \"@12 @345 @67"), vec![12, 345]);
        assert_eq!(stamps_in("no stamps @ here"), Vec::<u64>::new());
    }

    #[tokio::test]
    async fn a_stamped_stream_says_when_each_piece_was_written_in_a_text_answer() {
        let stub = StubProvider::start().await;
        let every = Duration::from_millis(20);
        stub.set_default(Reply::Stamped { pieces: 4, every });
        let asked = epoch_micros();
        let (kind, content) = ask(&stub, true).await;
        assert_eq!(kind, "text/event-stream");
        let answer: Value = serde_json::from_str(&content).expect("the content is JSON");
        let stamps = stamps_in(answer["text"].as_str().expect("a text answer"));
        assert_eq!(stamps.len(), 4, "{content}");
        // Each piece is stamped when it is written, after its pause: never before.
        let pause = every.as_micros() as u64;
        assert!(stamps[0] >= asked + pause, "{stamps:?}");
        assert!(stamps.windows(2).all(|two| two[1] >= two[0] + pause), "{stamps:?}");
    }

    #[tokio::test]
    async fn a_stamped_reply_not_asked_to_stream_is_one_answer_as_late_as_the_stream() {
        let stub = StubProvider::start().await;
        let every = Duration::from_millis(10);
        stub.set_default(Reply::Stamped { pieces: 5, every });
        let asked = epoch_micros();
        let (kind, content) = ask(&stub, false).await;
        assert_eq!(kind, "application/json");
        let answer: Value = serde_json::from_str(&content).expect("the content is JSON");
        let stamps = stamps_in(answer["text"].as_str().expect("a text answer"));
        assert_eq!(stamps.len(), 5, "{content}");
        assert!(stamps.iter().all(|stamp| *stamp >= asked + 5 * every.as_micros() as u64), "{stamps:?}");
    }
}
