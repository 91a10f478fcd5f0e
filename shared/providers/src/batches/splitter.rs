//! A result file's lines, read as its bytes arrive and bounded: each is JSON to read, or one
//! that cannot be (too long, not JSON), with the task id it seems to name so that its task fails
//! rather than waits. At most one line ([`MAX_RESULT_LINE_BYTES`]) is held, whatever the file's
//! size: an over-long line is dropped as it streams past, keeping only where its id may be.

use serde_json::Value;

use super::line::MAX_RESULT_LINE_BYTES;

/// How much of the end of an over-long line is kept to look for its id in, when its first
/// [`MAX_RESULT_LINE_BYTES`] did not name one (a provider may write the id last).
const TAIL_BYTES: usize = 4096;

/// One line of a result file.
pub(super) enum Line {
    /// Its bytes, as read (what a page's memory bound counts).
    Json(Value, usize),
    /// Over the line bound, or not JSON: the id its `key` field seems to hold, if any.
    Unreadable { id: Option<String>, too_long: bool },
}

/// Splits a stream of bytes into [`Line`]s; `key` is the field that names the task
/// (`custom_id`, `recordId`).
pub(super) struct Splitter {
    key: &'static str,
    line: Vec<u8>,
    /// An over-long line being dropped: the id found in its first part, and its last bytes.
    skipping: Option<(Option<String>, Vec<u8>)>,
}

impl Splitter {
    pub(super) fn new(key: &'static str) -> Splitter {
        Splitter { key, line: Vec::new(), skipping: None }
    }

    /// The lines `chunk` completes, pushed to `out`.
    pub(super) fn feed(&mut self, mut chunk: &[u8], out: &mut impl Extend<Line>) {
        while !chunk.is_empty() {
            let (part, ended) = match chunk.iter().position(|b| *b == b'\n') {
                Some(at) => (&chunk[..at], true),
                None => (chunk, false),
            };
            chunk = if ended { &chunk[part.len() + 1..] } else { &[] };
            self.take(part);
            if ended {
                self.end_line(out);
            }
        }
    }

    /// The last line, when the file does not end with a newline.
    pub(super) fn finish(&mut self, out: &mut impl Extend<Line>) {
        self.end_line(out);
    }

    fn take(&mut self, part: &[u8]) {
        if let Some((_, tail)) = &mut self.skipping {
            keep_tail(tail, part);
            return;
        }
        if self.line.len() + part.len() <= MAX_RESULT_LINE_BYTES {
            self.line.extend_from_slice(part);
            return;
        }
        // Over the bound: the id is looked for in its first bytes, then the line is dropped.
        let room = MAX_RESULT_LINE_BYTES - self.line.len();
        self.line.extend_from_slice(&part[..room]);
        let id = id_in(&String::from_utf8_lossy(&self.line), self.key);
        let mut tail = Vec::new();
        keep_tail(&mut tail, part);
        self.line = Vec::new();
        self.skipping = Some((id, tail));
    }

    fn end_line(&mut self, out: &mut impl Extend<Line>) {
        if let Some((id, tail)) = self.skipping.take() {
            // The head's and the tail's must not disagree: a model's answer may carry the key
            // too (an object key in a tool's input), and a wrong id would cost another task.
            let id = match (id, id_in(&String::from_utf8_lossy(&tail), self.key)) {
                (Some(head), Some(tail)) if head != tail => None,
                (head, tail) => head.or(tail),
            };
            out.extend(Some(Line::Unreadable { id, too_long: true }));
            return;
        }
        let bytes = self.line.len();
        let text = self.line.trim_ascii();
        if !text.is_empty() {
            out.extend(Some(match serde_json::from_slice::<Value>(text) {
                Ok(value) if value.is_object() => Line::Json(value, bytes),
                _ => {
                    Line::Unreadable { id: id_in(&String::from_utf8_lossy(text), self.key), too_long: false }
                }
            }));
        }
        self.line.clear();
    }
}

/// Keep the last [`TAIL_BYTES`] of what went past.
fn keep_tail(tail: &mut Vec<u8>, part: &[u8]) {
    tail.extend_from_slice(&part[part.len().saturating_sub(TAIL_BYTES)..]);
    let over = tail.len().saturating_sub(TAIL_BYTES);
    tail.drain(..over);
}

/// The string after the `"key":` of an unreadable line, if it is a short one and the key is
/// there once: twice, one may be a model's (an object key in its answer), and none is trusted.
fn id_in(line: &str, key: &str) -> Option<String> {
    let pattern = format!("\"{key}\"");
    if line.matches(&pattern).nth(1).is_some() {
        return None;
    }
    let at = line.find(&pattern)? + key.len() + 2;
    let rest = line.get(at..)?.trim_start().strip_prefix(':')?.trim_start().strip_prefix('"')?;
    let id: String = rest.chars().take_while(|c| *c != '"').take(65).collect();
    (id.len() <= 64).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` fed in pieces of `piece` bytes.
    fn split(text: &str, piece: usize) -> Vec<Line> {
        let mut splitter = Splitter::new("custom_id");
        let mut out = Vec::new();
        for chunk in text.as_bytes().chunks(piece) {
            splitter.feed(chunk, &mut out);
        }
        splitter.finish(&mut out);
        out
    }

    #[test]
    fn lines_are_read_and_an_unreadable_one_keeps_its_id() {
        let long = format!("{{\"custom_id\": \"t-2\", \"body\": \"{}\"}}", "x".repeat(MAX_RESULT_LINE_BYTES));
        let id_last =
            format!("{{\"body\": \"{}\", \"custom_id\": \"t-5\"}}", "y".repeat(MAX_RESULT_LINE_BYTES));
        let text = format!(
            "{{\"custom_id\": \"t-1\"}}\n\n{long}\r\n{{\"custom_id\" : \"t-3\", broken\nnot json\n{id_last}\n{{\"custom_id\": \"t-6\"}}"
        );
        for piece in [7, 4096, 1 << 20, text.len()] {
            let read = split(&text, piece);
            assert_eq!(read.len(), 6, "in pieces of {piece}");
            assert!(matches!(&read[0], Line::Json(v, _) if v["custom_id"] == "t-1"));
            assert!(matches!(&read[1], Line::Unreadable { id: Some(id), too_long: true } if id == "t-2"));
            assert!(matches!(&read[2], Line::Unreadable { id: Some(id), too_long: false } if id == "t-3"));
            assert!(matches!(&read[3], Line::Unreadable { id: None, .. }));
            assert!(matches!(&read[4], Line::Unreadable { id: Some(id), too_long: true } if id == "t-5"));
            assert!(matches!(&read[5], Line::Json(v, _) if v["custom_id"] == "t-6"), "no newline at the end");
        }
    }

    #[test]
    fn an_id_a_model_could_have_written_is_not_trusted() {
        // An unreadable line whose answer carries the key as well: whose line it is is unknown.
        let twice = r#"{"custom_id": "t-1", "body": {"input": {"custom_id": "t-9"}}, broken"#;
        assert!(matches!(&split(twice, 7)[0], Line::Unreadable { id: None, .. }));
        // A line too long whose head and tail name different tasks.
        let body = "x".repeat(MAX_RESULT_LINE_BYTES);
        let split_ids =
            format!(r#"{{"custom_id": "t-1", "body": "{body}", "input": {{"custom_id": "t-9"}}}}"#);
        assert!(matches!(&split(&split_ids, 4096)[0], Line::Unreadable { id: None, too_long: true }));
    }

    #[test]
    fn at_most_one_line_is_held() {
        let mut splitter = Splitter::new("custom_id");
        let mut out = Vec::new();
        let chunk = vec![b'z'; 64 * 1024];
        for _ in 0..64 {
            splitter.feed(&chunk, &mut out);
            assert!(splitter.line.capacity() <= 2 * MAX_RESULT_LINE_BYTES);
            assert!(splitter.skipping.as_ref().is_none_or(|(_, tail)| tail.len() <= TAIL_BYTES));
        }
        splitter.feed(b"\n", &mut out);
        assert!(matches!(&out[..], [Line::Unreadable { id: None, too_long: true }]));
    }
}
