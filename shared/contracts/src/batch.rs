//! `POST /v1/tasks/batch`: the envelope of many creates. Each item is a `POST /v1/tasks` body,
//! parsed on its own ([`crate::CreateTask`]), so one bad item is answered by itself and never
//! refuses its neighbours.

use serde_json::Value;

use crate::fields::Fields;
use crate::limits::BATCH_MAX_TASKS;
use crate::problems::{Path, Problems};

/// The items of a batch, in order, not yet parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateBatch<'a> {
    pub items: &'a [Value],
}

impl<'a> CreateBatch<'a> {
    /// `{"tasks": [<create body>, ...]}` with 1 to [`BATCH_MAX_TASKS`] items. Only the envelope
    /// is checked here: an item that is not a valid create is that item's own 400.
    pub fn parse(body: &'a Value) -> Result<CreateBatch<'a>, Problems> {
        let mut problems = Problems::new();
        let fields =
            Fields::object(body, &Path::root(), &["tasks"], &mut problems).ok_or_else(|| problems.clone())?;
        let items = match fields.required("tasks", &mut problems).map(|tasks| (tasks, tasks.as_array())) {
            Some((_, Some(items))) if (1..=BATCH_MAX_TASKS).contains(&items.len()) => Some(items),
            Some((_, Some(_))) => {
                problems.add(&fields.path("tasks"), format!("must hold 1 to {BATCH_MAX_TASKS} tasks"));
                None
            }
            Some((tasks, None)) => {
                let found = crate::fields::type_name(tasks);
                problems.add(&fields.path("tasks"), format!("must be an array, not {found}"));
                None
            }
            None => None,
        };
        match items {
            Some(items) if problems.is_empty() => Ok(CreateBatch { items: items.as_slice() }),
            _ => Err(problems),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_envelope_holds_one_to_a_thousand_items_of_any_shape() {
        let body = json!({"tasks": [{"stepKey": "s"}, 7]});
        assert_eq!(CreateBatch::parse(&body).unwrap().items.len(), 2, "items are parsed one by one later");
        for bad in [
            json!({"tasks": []}),
            json!({"tasks": {}}),
            json!({}),
            json!({"tasks": [1], "extra": true}),
            json!([]),
            json!({"tasks": vec![json!({}); BATCH_MAX_TASKS + 1]}),
        ] {
            let problems = CreateBatch::parse(&bad).unwrap_err();
            assert!(!problems.is_empty(), "{bad} is refused");
        }
        let full = json!({"tasks": vec![json!({}); BATCH_MAX_TASKS]});
        assert_eq!(CreateBatch::parse(&full).unwrap().items.len(), BATCH_MAX_TASKS);
    }
}
