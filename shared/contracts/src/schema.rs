//! The JSON Schema of the model's answer for each kind, in the subset OpenAI structured
//! outputs accept in strict mode: every property listed in `required`, optional values
//! nullable, `additionalProperties: false`. What strict mode cannot say (text length, how many
//! choices, distinct choices) is enforced by [`crate::check_answer`].

use serde_json::{json, Value};

use crate::request::{AiRequest, FieldSpec, FieldType};

/// The schema's name in `response_format.json_schema.name`.
pub fn schema_name(request: &AiRequest) -> &'static str {
    match request {
        AiRequest::GenerateText(_) => "generated_text",
        AiRequest::Classify(_) => "classification",
        AiRequest::ClassifyMany(_) => "classifications",
        AiRequest::ExtractData(_) => "structured_data",
    }
}

fn object(properties: Value, required: Vec<String>) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// Which JSON Schema keywords the endpoint can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SchemaDialect {
    /// OpenAI structured outputs in strict mode: no length or count bounds (they are refused).
    #[default]
    Strict,
    /// Endpoints that enforce full JSON Schema while generating (llama.cpp's grammar): the
    /// bounds are added (`maxLength`, `minItems`, `maxItems`), so a small model cannot ramble
    /// past them. The checker enforces them either way.
    Full,
}

/// The answer schema sent to the model (strict-mode subset).
pub fn answer_schema(request: &AiRequest) -> Value {
    answer_schema_for(request, SchemaDialect::Strict)
}

/// The answer schema in a given dialect.
pub fn answer_schema_for(request: &AiRequest, dialect: SchemaDialect) -> Value {
    let full = dialect == SchemaDialect::Full;
    match request {
        AiRequest::GenerateText(r) => {
            let mut text = json!({"type": "string"});
            if full {
                text["maxLength"] = json!(r.max_output_chars);
            }
            object(json!({"text": text}), vec!["text".into()])
        }
        AiRequest::Classify(r) => {
            object(json!({"choice": {"type": "string", "enum": r.choices}}), vec!["choice".into()])
        }
        AiRequest::ClassifyMany(r) => {
            let mut choices = json!({"type": "array", "items": {"type": "string", "enum": r.choices}});
            if full {
                choices["minItems"] = json!(r.min_choices);
                choices["maxItems"] = json!(r.max_choices);
            }
            object(json!({"choices": choices}), vec!["choices".into()])
        }
        AiRequest::ExtractData(r) => {
            let properties: serde_json::Map<String, Value> =
                r.fields.iter().map(|field| (field.name.clone(), field_schema(field, full))).collect();
            object(Value::Object(properties), r.fields.iter().map(|f| f.name.clone()).collect())
        }
    }
}

fn field_schema(field: &FieldSpec, full: bool) -> Value {
    let base = match field.field_type {
        FieldType::Text | FieldType::DateTime | FieldType::Choice => "string",
        FieldType::Number => "number",
        FieldType::Boolean => "boolean",
    };
    let mut schema = serde_json::Map::new();
    schema.insert("type".into(), if field.required { json!(base) } else { json!([base, "null"]) });
    if !field.description.is_empty() {
        schema.insert("description".into(), json!(field.description));
    }
    if let (true, Some(max_length)) = (full, field.max_length) {
        schema.insert("maxLength".into(), json!(max_length));
    }
    if field.field_type == FieldType::DateTime {
        schema.insert("format".into(), json!("date-time"));
    }
    if let Some(choices) = &field.choices {
        let mut values: Vec<Value> = choices.iter().map(|c| json!(c)).collect();
        if !field.required {
            values.push(Value::Null);
        }
        schema.insert("enum".into(), Value::Array(values));
    }
    Value::Object(schema)
}
