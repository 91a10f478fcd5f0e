//! `POST /v1/tasks/batch`: the envelope of many creates. Each item is a `POST /v1/tasks` body,
//! parsed on its own ([`crate::CreateTask`]), so one bad item is answered by itself and never
//! refuses its neighbours.

use serde_json::value::RawValue;
use serde_json::Value;

use crate::limits::BULK_MAX_TASKS;
use crate::problems::{Path, Problems};

/// The items of a batch, in order, not yet parsed: each is the text of one create body, so the
/// batch is never a single tree in memory (a body of many small values is tens of times its size
/// as one); the items are parsed one at a time.
#[derive(Debug, Clone)]
pub struct CreateMany<'a> {
    pub items: Vec<&'a RawValue>,
}

impl<'a> CreateMany<'a> {
    /// `{"tasks": [<create body>, ...]}` with 1 to [`BULK_MAX_TASKS`] items. Only the envelope
    /// is checked here: an item that is not a valid create is that item's own 400.
    pub fn parse(body: &'a [u8]) -> Result<CreateMany<'a>, Problems> {
        let root = Path::root();
        let not_json = |e: serde_json::Error| Problems::one(&root, format!("is not valid JSON: {e}"));
        // The whole body is JSON (read without keeping it), or it is refused as the single create is.
        serde_json::from_slice::<serde::de::IgnoredAny>(body).map_err(not_json)?;
        let Ok(envelope) = serde_json::from_slice::<std::collections::BTreeMap<String, &'a RawValue>>(body)
        else {
            return Err(Problems::one(&root, format!("must be an object, not {}", kind_of(body))));
        };
        let mut problems = Problems::new();
        for key in envelope.keys().filter(|key| key.as_str() != "tasks") {
            problems.add(&root.key(key), "is not a known field");
        }
        let tasks_path = root.key("tasks");
        let items = match envelope.get("tasks") {
            None => {
                problems.add(&tasks_path, "is required");
                None
            }
            Some(tasks) => match serde_json::from_str::<Vec<&'a RawValue>>(tasks.get()) {
                Ok(items) if (1..=BULK_MAX_TASKS).contains(&items.len()) => Some(items),
                Ok(_) => {
                    problems.add(&tasks_path, format!("must hold 1 to {BULK_MAX_TASKS} tasks"));
                    None
                }
                Err(_) => {
                    problems.add(
                        &tasks_path,
                        format!("must be an array, not {}", kind_of(tasks.get().as_bytes())),
                    );
                    None
                }
            },
        };
        match items {
            Some(items) if problems.is_empty() => Ok(CreateMany { items }),
            _ => Err(problems),
        }
    }
}

/// What kind of JSON value a (valid) text holds, by its first character.
fn kind_of(text: &[u8]) -> &'static str {
    match text.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// One item of a batch as a tree, to be parsed as a create body.
pub fn item_value(item: &RawValue) -> Result<Value, Problems> {
    serde_json::from_str(item.get())
        .map_err(|e| Problems::one(&Path::root(), format!("is not valid JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(body: &Value) -> Result<usize, Problems> {
        let text = body.to_string();
        CreateMany::parse(text.as_bytes()).map(|batch| batch.items.len())
    }

    #[test]
    fn the_envelope_holds_one_to_a_thousand_items_of_any_shape() {
        let body = json!({"tasks": [{"stepKey": "s"}, 7]});
        assert_eq!(parse(&body).unwrap(), 2, "items are parsed one by one later");
        let problems = CreateMany::parse(b"{\"tasks\": 5}").unwrap_err();
        assert!(problems.to_string().contains("must be an array, not a number"), "{problems}");
        assert!(CreateMany::parse(b"{\"tasks\": [").is_err(), "not JSON");
        for bad in [
            json!({"tasks": []}),
            json!({"tasks": {}}),
            json!({}),
            json!({"tasks": [1], "extra": true}),
            json!([]),
            json!({"tasks": vec![json!({}); BULK_MAX_TASKS + 1]}),
        ] {
            let problems = parse(&bad).unwrap_err();
            assert!(!problems.is_empty(), "{bad} is refused");
        }
        let full = json!({"tasks": vec![json!({}); BULK_MAX_TASKS]});
        assert_eq!(parse(&full).unwrap(), BULK_MAX_TASKS);
    }
}
