//! Checking a value against one of our own answer schemas ([`crate::answer_schema_for`]).
//!
//! The answer schemas are generated here from the request, never taken from a caller, and they
//! use a handful of keywords: `type` (one name or a list), `enum`, `properties`, `required`,
//! `additionalProperties: false`, `items`, `format: "date-time"`, `maxLength`, `minItems`,
//! `maxItems`, and `description` (which asserts nothing). This walks exactly those, with JSON
//! Schema's meaning, so an answer it passes conforms to the schema the model was given.
//!
//! Why not a general validator: the `jsonschema` crate and the three regex engines it brings
//! were 2 MB of every Lambda binary that checks answers (BENCHMARKS.md, issue 51), for keywords
//! our schemas never use. The contract's property tests hold this checker to `jsonschema`'s
//! verdict on generated schemas and hostile answers, so the two cannot drift apart.
//!
//! A keyword this checker does not know is a problem, not something to skip: a schema that
//! outgrows the checker refuses every answer (and fails the tests) instead of passing unchecked
//! ones.

use serde_json::{Map, Value};

use crate::fields::type_name;
use crate::problems::{Path, Problems};

/// How many of an `enum`'s values a problem lists (a `classify` may declare many choices).
const ENUM_LISTED_MAX: usize = 20;

/// Every way `value` breaks `schema`, each at the path of the value that breaks it.
pub fn schema_problems(schema: &Value, value: &Value) -> Problems {
    let mut problems = Problems::new();
    check(schema, value, &Path::root(), &mut problems);
    problems
}

fn check(schema: &Value, value: &Value, path: &Path, problems: &mut Problems) {
    let Some(keywords) = schema.as_object() else {
        problems.add(path, "has a schema that is not an object");
        return;
    };
    for (keyword, argument) in keywords {
        match keyword.as_str() {
            "type" => check_type(argument, value, path, problems),
            "enum" => check_enum(argument, value, path, problems),
            "properties" | "required" | "additionalProperties" => {
                // Checked together, once, by `check_object` below.
            }
            "items" => {
                if let Value::Array(items) = value {
                    for (index, item) in items.iter().enumerate() {
                        check(argument, item, &path.index(index), problems);
                    }
                }
            }
            "format" => check_format(argument, value, path, problems),
            "maxLength" => {
                if let (Value::String(text), Some(max)) = (value, argument.as_u64()) {
                    if text.chars().count() as u64 > max {
                        problems.add(path, format!("must have at most {max} characters"));
                    }
                }
            }
            "minItems" | "maxItems" => check_count(keyword, argument, value, path, problems),
            "description" => {}
            unknown => {
                problems.add(path, format!("has a schema keyword the checker does not know: {unknown}"))
            }
        }
    }
    if let Value::Object(map) = value {
        check_object(keywords, map, path, problems);
    }
}

fn check_type(argument: &Value, value: &Value, path: &Path, problems: &mut Problems) {
    let names: Vec<&str> = match argument {
        Value::String(name) => vec![name.as_str()],
        Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if names.is_empty() {
        problems.add(path, format!("has a type the checker does not know: {argument}"));
        return;
    }
    if names.iter().any(|name| is_of_type(name, value)) {
        return;
    }
    let wanted: Vec<&str> = names.iter().map(|name| article(name)).collect();
    problems.add(path, format!("must be {}, not {}", wanted.join(" or "), type_name(value)));
}

/// JSON Schema's type names; `integer` is a number with no fraction (so `2.0` is one).
fn is_of_type(name: &str, value: &Value) -> bool {
    match (name, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

fn article(name: &str) -> &str {
    match name {
        "null" => "null",
        "boolean" => "a boolean",
        "number" => "a number",
        "integer" => "an integer",
        "string" => "a string",
        "array" => "an array",
        "object" => "an object",
        other => other,
    }
}

fn check_enum(argument: &Value, value: &Value, path: &Path, problems: &mut Problems) {
    let allowed = argument.as_array().map(Vec::as_slice).unwrap_or_default();
    if allowed.iter().any(|candidate| same(candidate, value)) {
        return;
    }
    let listed: Vec<String> = allowed.iter().take(ENUM_LISTED_MAX).map(Value::to_string).collect();
    let rest = allowed.len().saturating_sub(ENUM_LISTED_MAX);
    let more = if rest > 0 { format!(" and {rest} more") } else { String::new() };
    problems.add(path, format!("must be one of {}{more}", listed.join(", ")));
}

/// JSON Schema's equality: numbers by value (`1` equals `1.0`), everything else structurally.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
            (Some(x), Some(y), _, _) => x == y,
            (_, _, Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(key, x)| y.get(key).is_some_and(|y| same(x, y)))
        }
        _ => a == b,
    }
}

fn check_format(argument: &Value, value: &Value, path: &Path, problems: &mut Problems) {
    let Value::String(text) = value else { return };
    match argument.as_str() {
        Some("date-time") => {
            if !is_date_time(text) {
                problems.add(path, "must be an RFC 3339 date-time with an offset");
            }
        }
        _ => problems.add(path, format!("has a format the checker does not know: {argument}")),
    }
}

/// RFC 3339's `date-time`: a full date, `T`, a full time with its offset. chrono reads the rest;
/// the separator is checked here because chrono also takes a space, which `date-time` does not.
fn is_date_time(text: &str) -> bool {
    matches!(text.as_bytes().get(10), Some(b'T' | b't')) && chrono::DateTime::parse_from_rfc3339(text).is_ok()
}

fn check_count(keyword: &str, argument: &Value, value: &Value, path: &Path, problems: &mut Problems) {
    let (Value::Array(items), Some(bound)) = (value, argument.as_u64()) else { return };
    let count = items.len() as u64;
    match keyword {
        "minItems" if count < bound => {
            problems.add(path, format!("must have at least {bound} items, not {count}"))
        }
        "maxItems" if count > bound => {
            problems.add(path, format!("must have at most {bound} items, not {count}"))
        }
        _ => {}
    }
}

/// `properties`, `required` and `additionalProperties: false` on an object value. A missing
/// property is reported at its own path, an undeclared one at its own path too, so a repair
/// turn can name the field to fix.
fn check_object(
    keywords: &Map<String, Value>,
    map: &Map<String, Value>,
    path: &Path,
    problems: &mut Problems,
) {
    let properties = keywords.get("properties").and_then(Value::as_object);
    if let Some(required) = keywords.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(name) {
                problems.add(&path.key(name), "is required");
            }
        }
    }
    let closed = match keywords.get("additionalProperties") {
        None | Some(Value::Bool(true)) => false,
        Some(Value::Bool(false)) => true,
        Some(other) => {
            problems.add(path, format!("has an additionalProperties the checker does not know: {other}"));
            true
        }
    };
    for (key, item) in map {
        match properties.and_then(|declared| declared.get(key)) {
            Some(schema) => check(schema, item, &path.key(key), problems),
            None if closed => problems.add(&path.key(key), "is not a declared property"),
            None => {}
        }
    }
}
