//! Checking the model's answer against everything the request demands, and turning it into the
//! task's output.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::fields::check_document;
use crate::problems::{Path, Problems};
use crate::request::{AiRequest, FieldType};
use crate::schema::answer_schema;
use crate::schema_check::schema_problems;

/// An answer nests far less than this; deeper is not a valid answer of any kind.
const ANSWER_MAX_DEPTH: usize = 16;

/// Check an answer and return the task's output:
/// - `generate_text`: the text (at most `maxOutputChars` characters);
/// - `classify`: the chosen string;
/// - `classify_many`: the distinct choices in declared order (repeats from the model are
///   dropped first), between `minChoices` and `maxChoices` of them;
/// - `extract_data`: an object of the declared fields, optional ones absent when null, text
///   within `maxLength`, date-times in RFC 3339 with an offset.
///
/// The answer must first pass the strict-mode answer schema ([`crate::schema_problems`]), so a
/// checked answer conforms to the schema a strict-mode model was given. The bounds the full
/// dialect adds are then judged here as the output has them: `classify_many`'s count on the
/// distinct choices (the schema's `maxItems` would count a repeat).
pub fn check_answer(request: &AiRequest, answer: &Value) -> Result<Value, Problems> {
    let mut problems = Problems::new();
    // What the store cannot hold is as invalid as what the schema refuses: Postgres refuses a
    // NUL in `jsonb` (SQLSTATE 22P05), anywhere in a string or a key, and an output it cannot
    // store would fail the statement that settles it (with its neighbours, in a group commit).
    check_document(answer, &Path::root(), ANSWER_MAX_DEPTH, &mut problems);
    problems.absorb(schema_problems(&answer_schema(request), answer));
    if !problems.is_empty() {
        return Err(problems);
    }
    let root = Path::root();
    let output = match request {
        AiRequest::GenerateText(r) => {
            let text = answer["text"].as_str().unwrap_or_default();
            if text.chars().count() > r.max_output_chars as usize {
                problems
                    .add(&root.key("text"), format!("must have at most {} characters", r.max_output_chars));
            }
            Value::String(text.to_owned())
        }
        AiRequest::Classify(_) => answer["choice"].clone(),
        AiRequest::ClassifyMany(r) => {
            let picked: HashSet<&str> =
                answer["choices"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            let ordered: Vec<Value> = r
                .choices
                .iter()
                .filter(|c| picked.contains(c.as_str()))
                .map(|c| Value::String(c.clone()))
                .collect();
            let count = ordered.len() as u32;
            if count < r.min_choices || count > r.max_choices {
                problems.add(
                    &root.key("choices"),
                    format!(
                        "must pick between {} and {} distinct choices, not {count}",
                        r.min_choices, r.max_choices
                    ),
                );
            }
            Value::Array(ordered)
        }
        AiRequest::ExtractData(r) => {
            let mut out = Map::new();
            for field in &r.fields {
                let path = root.key(&field.name);
                let value = answer.get(&field.name).filter(|v| !v.is_null());
                let Some(value) = value else {
                    if field.required {
                        problems.add(&path, "is required");
                    }
                    continue;
                };
                match field.field_type {
                    FieldType::Text => {
                        let limit = field.max_length.unwrap_or(u32::MAX) as usize;
                        if value.as_str().is_some_and(|t| t.chars().count() > limit) {
                            problems.add(&path, format!("must have at most {limit} characters"));
                        }
                    }
                    // A date-time's form is the schema's `format`, checked above.
                    FieldType::DateTime | FieldType::Number | FieldType::Boolean | FieldType::Choice => {}
                }
                out.insert(field.name.clone(), value.clone());
            }
            Value::Object(out)
        }
    };
    problems.into_result(output)
}
