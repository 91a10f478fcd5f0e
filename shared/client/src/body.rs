//! A create body (`POST /v1/tasks`, one item of a batch): JSON as the caller wrote it, checked
//! against the contract by the same parser the API runs (`aitasks_contracts::CreateTask`), or
//! sent unchecked for the API to judge.

use aitasks_contracts::{CreateTask, Problems};
use serde::Serialize;
use serde_json::Value;

/// A create body, sent exactly as given.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct TaskBody {
    value: Value,
    #[serde(skip)]
    checked: bool,
}

impl TaskBody {
    /// A body the contract's parser accepts, or every problem it found (each with its JSON
    /// path), as the API's 400 `INVALID_REQUEST` would list them. What only the server can
    /// know (the model profile, the run, admission) is still its to answer.
    pub fn checked(value: Value) -> Result<TaskBody, Problems> {
        CreateTask::parse(&value)?;
        Ok(TaskBody { value, checked: true })
    }

    /// A body sent as it is: the API judges it.
    pub fn unchecked(value: Value) -> TaskBody {
        TaskBody { value, checked: false }
    }

    /// Whether [`TaskBody::checked`] made it.
    pub fn is_checked(&self) -> bool {
        self.checked
    }

    pub fn as_value(&self) -> &Value {
        &self.value
    }

    /// The effect key, when the body has one.
    pub fn effect_key(&self) -> Option<&str> {
        self.value.get("effectKey").and_then(Value::as_str)
    }

    /// The body's JSON text.
    pub fn to_json(&self) -> String {
        self.value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_contracts_parser_judges_a_checked_body() {
        let good = json!({
            "owner": {"scopeId": "s"}, "stepKey": "label", "effectKey": "k1", "modelId": "default",
            "request": {"kind": "classify", "prompt": "Label it.", "input": "x", "choices": ["a", "b"]}
        });
        let body = TaskBody::checked(good.clone()).unwrap();
        assert_eq!((body.effect_key(), body.as_value()), (Some("k1"), &good));
        let mut bad = good;
        bad["request"]["kind"] = json!("summarize");
        let problems = TaskBody::checked(bad.clone()).unwrap_err();
        assert_eq!(problems.paths(), ["request.kind"]);
        assert!(!TaskBody::unchecked(bad).is_checked());
    }
}
