//! A result file's lines, bounded: each is JSON to read, or one that cannot be (too long, not
//! JSON), with the task id it seems to name so that its task fails rather than waits.

use serde_json::Value;

use super::MAX_RESULT_LINE_BYTES;

/// One line of a result file.
pub(super) enum Line {
    Json(Value),
    /// Over the line bound, or not JSON: the id its `key` field seems to hold, if any.
    Unreadable {
        id: Option<String>,
        too_long: bool,
    },
}

/// The non-blank lines of `text`; `key` is the field that names the task (`custom_id`, `recordId`).
pub(super) fn lines<'a>(text: &'a str, key: &'a str) -> impl Iterator<Item = Line> + 'a {
    text.split('\n').map(str::trim).filter(|line| !line.is_empty()).map(move |line| {
        if line.len() > MAX_RESULT_LINE_BYTES {
            return Line::Unreadable { id: id_in(line, key), too_long: true };
        }
        match serde_json::from_str::<Value>(line) {
            Ok(value) if value.is_object() => Line::Json(value),
            _ => Line::Unreadable { id: id_in(line, key), too_long: false },
        }
    })
}

/// The string after the first `"key":` of an unreadable line, if it is a short one.
fn id_in(line: &str, key: &str) -> Option<String> {
    let at = line.find(&format!("\"{key}\""))? + key.len() + 2;
    let rest = line.get(at..)?.trim_start().strip_prefix(':')?.trim_start().strip_prefix('"')?;
    let id: String = rest.chars().take_while(|c| *c != '"').take(65).collect();
    (id.len() <= 64).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_and_an_unreadable_one_keeps_its_id() {
        let long = format!("{{\"custom_id\": \"t-2\", \"body\": \"{}\"}}", "x".repeat(MAX_RESULT_LINE_BYTES));
        let text =
            format!("{{\"custom_id\": \"t-1\"}}\n\n{long}\r\n{{\"custom_id\" : \"t-3\", broken\nnot json");
        let read: Vec<Line> = lines(&text, "custom_id").collect();
        assert_eq!(read.len(), 4);
        assert!(matches!(&read[0], Line::Json(v) if v["custom_id"] == "t-1"));
        assert!(matches!(&read[1], Line::Unreadable { id: Some(id), too_long: true } if id == "t-2"));
        assert!(matches!(&read[2], Line::Unreadable { id: Some(id), too_long: false } if id == "t-3"));
        assert!(matches!(&read[3], Line::Unreadable { id: None, .. }));
    }
}
