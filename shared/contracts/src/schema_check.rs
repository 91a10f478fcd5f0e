//! Checking a value against one of our own answer schemas ([`crate::answer_schema_for`]).
//!
//! The answer schemas are generated here from the request, never taken from a caller, and they
//! use eleven keywords: `type` (one name or a list), `enum` (strings and `null`), `properties`,
//! `required`, `additionalProperties: false`, `items`, `format: "date-time"`, `maxLength`,
//! `minItems`, `maxItems`, and `description` (which asserts nothing). This walks exactly those,
//! with JSON Schema's meaning, so an answer it passes conforms to the schema.
//!
//! Why not a general validator: the `jsonschema` crate, with what it brings, was 2.6 MB of every
//! Lambda binary that checks answers (BENCHMARKS.md, issue 51), for keywords our schemas never
//! use. The contract's property tests hold this checker to `jsonschema`'s verdict
//! on generated schemas and hostile answers, so the two cannot drift apart.
//!
//! A keyword, or a keyword's argument, this checker does not know is a problem, not something
//! to skip: a schema that outgrows the checker refuses every answer (and fails the tests)
//! instead of passing unchecked ones.
//!
//! The work is linear in the answer: the walk follows the schema (three levels deep at most),
//! and a problem's message is written only while the list has room ([`Problems::add_with`]).

use chrono::Timelike;
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

fn unknown(problems: &mut Problems, path: &Path, keyword: &str, argument: &Value) {
    problems.add_with(path, || format!("has a schema the checker does not know: {keyword} {argument}"));
}

fn check(schema: &Value, value: &Value, path: &Path, problems: &mut Problems) {
    let Some(keywords) = schema.as_object() else {
        return unknown(problems, path, "schema", schema);
    };
    for (keyword, argument) in keywords {
        match keyword.as_str() {
            "type" => check_type(argument, value, path, problems),
            "enum" => check_enum(argument, value, path, problems),
            // Checked together, once, by `check_object` below.
            "properties" | "required" | "additionalProperties" => {}
            "items" => {
                if let Value::Array(items) = value {
                    for (index, item) in items.iter().enumerate() {
                        check(argument, item, &path.index(index), problems);
                    }
                }
            }
            "format" => check_format(argument, value, path, problems),
            "maxLength" | "minItems" | "maxItems" => match argument.as_u64() {
                Some(bound) => check_bound(keyword, bound, value, path, problems),
                None => unknown(problems, path, keyword, argument),
            },
            "description" => {}
            other => unknown(problems, path, other, argument),
        }
    }
    if let Value::Object(map) = value {
        check_object(keywords, map, path, problems);
    }
}

fn check_type(argument: &Value, value: &Value, path: &Path, problems: &mut Problems) {
    let listed = match argument {
        Value::Array(names) => names.as_slice(),
        single => std::slice::from_ref(single),
    };
    let Some(names) = listed.iter().map(|name| name.as_str().and_then(phrase)).collect::<Option<Vec<_>>>()
    else {
        return unknown(problems, path, "type", argument);
    };
    if names.is_empty() {
        return unknown(problems, path, "type", argument);
    }
    if listed.iter().filter_map(Value::as_str).any(|name| is_of_type(name, value)) {
        return;
    }
    problems.add_with(path, || format!("must be {}, not {}", names.join(" or "), type_name(value)));
}

/// The types our schemas name, as a problem says them (the phrases `type_name` uses).
fn phrase(name: &str) -> Option<&'static str> {
    Some(type_name(&match name {
        "null" => Value::Null,
        "boolean" => Value::Bool(false),
        "number" => Value::from(0),
        "string" => Value::String(String::new()),
        "array" => Value::Array(Vec::new()),
        "object" => Value::Object(Map::new()),
        _ => return None,
    }))
}

fn is_of_type(name: &str, value: &Value) -> bool {
    matches!(
        (name, value),
        ("null", Value::Null)
            | ("boolean", Value::Bool(_))
            | ("number", Value::Number(_))
            | ("string", Value::String(_))
            | ("array", Value::Array(_))
            | ("object", Value::Object(_))
    )
}

/// Strings and `null` only: for them JSON Schema's equality is `==` (a number's is not: `1`
/// equals `1.0`), and our enums hold nothing else.
fn check_enum(argument: &Value, value: &Value, path: &Path, problems: &mut Problems) {
    let allowed = match argument.as_array() {
        Some(allowed) if allowed.iter().all(|v| v.is_string() || v.is_null()) => allowed,
        _ => return unknown(problems, path, "enum", argument),
    };
    if allowed.contains(value) {
        return;
    }
    problems.add_with(path, || {
        let listed: Vec<String> = allowed.iter().take(ENUM_LISTED_MAX).map(Value::to_string).collect();
        let rest = allowed.len().saturating_sub(ENUM_LISTED_MAX);
        let more = if rest > 0 { format!(" and {rest} more") } else { String::new() };
        format!("must be one of {}{more}", listed.join(", "))
    });
}

fn check_format(argument: &Value, value: &Value, path: &Path, problems: &mut Problems) {
    if argument.as_str() != Some("date-time") {
        return unknown(problems, path, "format", argument);
    }
    if let Value::String(text) = value {
        if !is_date_time(text) {
            problems.add(path, "must be an RFC 3339 date-time with an offset");
        }
    }
}

/// RFC 3339's `date-time`, as JSON Schema reads it: a full date, `T`, a full time with its
/// offset, in ASCII. chrono parses it, and is more lenient in three ways checked here: it takes
/// a space for the `T`, a Unicode minus sign in the offset, and a leap second (`:60`) at any
/// time of day, where one is only ever inserted at 23:59 UTC.
fn is_date_time(text: &str) -> bool {
    if !text.is_ascii() || !matches!(text.as_bytes().get(10), Some(b'T' | b't')) {
        return false;
    }
    let Ok(parsed) = chrono::DateTime::parse_from_rfc3339(text) else { return false };
    // chrono keeps a leap second as a nanosecond count of a second or more.
    let leap = parsed.nanosecond() >= 1_000_000_000;
    let utc = parsed.naive_utc();
    !leap || (utc.hour() == 23 && utc.minute() == 59)
}

fn check_bound(keyword: &str, bound: u64, value: &Value, path: &Path, problems: &mut Problems) {
    match (keyword, value) {
        ("maxLength", Value::String(text)) if text.chars().count() as u64 > bound => {
            problems.add_with(path, || format!("must have at most {bound} characters"))
        }
        ("minItems", Value::Array(items)) if (items.len() as u64) < bound => {
            problems.add_with(path, || format!("must have at least {bound} items, not {}", items.len()))
        }
        ("maxItems", Value::Array(items)) if items.len() as u64 > bound => {
            problems.add_with(path, || format!("must have at most {bound} items, not {}", items.len()))
        }
        _ => {}
    }
}

/// `properties`, `required` and `additionalProperties: false` on an object value. A missing
/// property is reported at its own path, an undeclared one too, so a repair turn can name the
/// field to fix.
fn check_object(
    keywords: &Map<String, Value>,
    map: &Map<String, Value>,
    path: &Path,
    problems: &mut Problems,
) {
    let properties = match keywords.get("properties") {
        None => None,
        Some(Value::Object(properties)) => Some(properties),
        Some(other) => return unknown(problems, path, "properties", other),
    };
    match keywords.get("required") {
        None => {}
        Some(Value::Array(required)) if required.iter().all(Value::is_string) => {
            for name in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(name) {
                    problems.add(&path.key(name), "is required");
                }
            }
        }
        Some(other) => unknown(problems, path, "required", other),
    }
    let closed = match keywords.get("additionalProperties") {
        None | Some(Value::Bool(true)) => false,
        Some(Value::Bool(false)) => true,
        Some(other) => {
            unknown(problems, path, "additionalProperties", other);
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
