//! The bytes an answer takes in Lambda's response. An HTTP function returns an API Gateway
//! response document whose `body` is a JSON string: every `"`, `\` and control character of the
//! answer's JSON is escaped once more there, so a task whose output is full of quotes takes
//! twice its JSON's length. Lambda's 6 MB response limit counts those bytes, and so do the
//! budgets of the answers that carry many tasks ([`crate::ANSWER_MAX_BYTES`]).

use std::io;

use serde::Serialize;

/// Bytes of `value`'s compact JSON once escaped into a JSON string, without the two quotes
/// around it: parts counted this way add up to the body they make.
pub fn escaped_json_bytes<T: Serialize + ?Sized>(value: &T) -> usize {
    let mut counter = EscapedCounter(0);
    // Writing to a counter cannot fail, and an answer is plain data (string keys only), so
    // serializing it cannot fail either.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// Bytes of `value` as the `body` string of a Lambda response, its quotes included.
pub fn response_body_bytes<T: Serialize + ?Sized>(value: &T) -> usize {
    escaped_json_bytes(value) + 2
}

/// The bytes `output` would take in an answer, when that is over [`crate::OUTPUT_MAX_BYTES`]
/// (the task cannot store it); `None` when it fits.
pub fn oversized_output<T: Serialize + ?Sized>(output: &T) -> Option<usize> {
    Some(escaped_json_bytes(output)).filter(|&bytes| bytes > crate::OUTPUT_MAX_BYTES)
}

/// Counts what serde_json writes for each byte of a string: `\"`, `\\`, the short escapes of
/// five control characters, `\u00XX` for the others, and every other byte as it is (serde_json
/// writes non-ASCII as UTF-8, unescaped).
struct EscapedCounter(usize);

impl io::Write for EscapedCounter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0 += bytes
            .iter()
            .map(|byte| match byte {
                b'"' | b'\\' | 0x08 | 0x0c | b'\n' | b'\r' | b'\t' => 2,
                0x00..=0x1f => 6,
                _ => 1,
            })
            .sum::<usize>();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_count_is_the_length_of_the_json_escaped_once_more() {
        let every_byte: String = (0u8..=0x7f).map(char::from).collect();
        for value in [
            json!({"output": "plain"}),
            json!({"output": "\"quoted\" \\ back\\slashed \n\t\r\u{8}\u{c} \u{1}\u{1f}\u{7f}"}),
            json!({"output": every_byte, "é": "ünïcødé 🚀"}),
            json!([1.5, -2, null, true, {"nested": ["\"\\"]}]),
        ] {
            let text = serde_json::to_string(&value).unwrap();
            let as_body = serde_json::to_string(&text).unwrap();
            assert_eq!(response_body_bytes(&value), as_body.len(), "{value}");
            assert_eq!(escaped_json_bytes(&value), as_body.len() - 2);
        }
    }
}
