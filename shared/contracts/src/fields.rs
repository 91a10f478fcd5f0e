//! Strict readers for JSON objects: unknown fields are refused, every problem is recorded with
//! its path, and reading goes on after a problem so that all of them are reported at once.

use serde_json::{Map, Value};

use crate::problems::{Path, Problems};

/// A JSON object being read field by field.
pub(crate) struct Fields<'a> {
    map: &'a Map<String, Value>,
    path: Path,
}

impl<'a> Fields<'a> {
    /// Read `value` as an object whose keys must all be in `allowed`.
    pub(crate) fn object(
        value: &'a Value,
        path: &Path,
        allowed: &[&str],
        problems: &mut Problems,
    ) -> Option<Fields<'a>> {
        let Some(map) = value.as_object() else {
            problems.add(path, format!("must be an object, not {}", type_name(value)));
            return None;
        };
        for key in map.keys() {
            if !allowed.contains(&key.as_str()) {
                problems.add(&path.key(key), "is not a known field");
            }
        }
        Some(Fields { map, path: path.clone() })
    }

    pub(crate) fn path(&self, key: &str) -> Path {
        self.path.key(key)
    }

    pub(crate) fn has(&self, key: &str) -> bool {
        self.map.get(key).is_some_and(|v| !v.is_null())
    }

    /// Whether the key is in the object at all (`null` counts as present).
    pub(crate) fn present(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    /// The raw value of an optional field (`null` counts as absent).
    pub(crate) fn value(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// A value that must be present, where `null` counts as a present value.
    pub(crate) fn required_any(&self, key: &str, problems: &mut Problems) -> Option<&'a Value> {
        let value = self.map.get(key);
        if value.is_none() {
            problems.add(&self.path(key), "is required");
        }
        value
    }

    /// A value that must be present.
    pub(crate) fn required(&self, key: &str, problems: &mut Problems) -> Option<&'a Value> {
        let value = self.value(key);
        if value.is_none() {
            problems.add(&self.path(key), "is required");
        }
        value
    }

    /// A required string of `min..=max` characters.
    pub(crate) fn string(
        &self,
        key: &str,
        min: usize,
        max: usize,
        problems: &mut Problems,
    ) -> Option<String> {
        let value = self.required(key, problems)?;
        string_value(value, &self.path(key), min, max, problems)
    }

    /// A required integer in `min..=max`.
    pub(crate) fn integer(&self, key: &str, min: i64, max: i64, problems: &mut Problems) -> Option<i64> {
        let value = self.required(key, problems)?;
        integer_value(value, &self.path(key), min, max, problems)
    }

    /// An optional integer in `min..=max`.
    pub(crate) fn opt_integer(&self, key: &str, min: i64, max: i64, problems: &mut Problems) -> Option<i64> {
        integer_value(self.value(key)?, &self.path(key), min, max, problems)
    }

    /// A required boolean.
    pub(crate) fn boolean(&self, key: &str, problems: &mut Problems) -> Option<bool> {
        let value = self.required(key, problems)?;
        boolean_value(value, &self.path(key), problems)
    }

    /// An optional boolean.
    pub(crate) fn opt_boolean(&self, key: &str, problems: &mut Problems) -> Option<bool> {
        boolean_value(self.value(key)?, &self.path(key), problems)
    }
}

fn boolean_value(value: &Value, path: &Path, problems: &mut Problems) -> Option<bool> {
    let flag = value.as_bool();
    if flag.is_none() {
        problems.add(path, format!("must be a boolean, not {}", type_name(value)));
    }
    flag
}

pub(crate) fn string_value(
    value: &Value,
    path: &Path,
    min: usize,
    max: usize,
    problems: &mut Problems,
) -> Option<String> {
    let Some(text) = value.as_str() else {
        problems.add(path, format!("must be a string, not {}", type_name(value)));
        return None;
    };
    if text.contains('\0') {
        problems.add(path, "must not contain the NUL character");
        return None;
    }
    let length = text.chars().count();
    if length < min {
        problems.add(
            path,
            if min == 1 {
                "must not be empty".to_owned()
            } else {
                format!("must have at least {min} characters")
            },
        );
        return None;
    }
    if length > max {
        problems.add(path, format!("must have at most {max} characters"));
        return None;
    }
    Some(text.to_owned())
}

/// An integer as JSON has it: `5`, and also `5.0` or `1e3`, which are the same number to a
/// JavaScript client (the reference checks `Number.isSafeInteger`). A double counts only when it
/// is whole and within the safe integers (±(2^53 − 1)), where it is exact.
fn as_integer(value: &Value) -> Option<i64> {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    value.as_i64().or_else(|| {
        let double = value.as_f64()?;
        (double.fract() == 0.0 && double.abs() <= SAFE).then_some(double as i64)
    })
}

pub(crate) fn integer_value(
    value: &Value,
    path: &Path,
    min: i64,
    max: i64,
    problems: &mut Problems,
) -> Option<i64> {
    let Some(number) = as_integer(value) else {
        let what = if value.is_number() { "a whole number in range" } else { "an integer" };
        problems.add(path, format!("must be {what}, between {min} and {max}"));
        return None;
    };
    if number < min || number > max {
        problems.add(path, format!("must be between {min} and {max}"));
        return None;
    }
    Some(number)
}

/// A list of `min..=max` distinct strings of `item_min..=item_max` characters each.
pub(crate) fn distinct_strings(
    value: &Value,
    path: &Path,
    (min, max): (usize, usize),
    (item_min, item_max): (usize, usize),
    problems: &mut Problems,
) -> Option<Vec<String>> {
    let Some(items) = value.as_array() else {
        problems.add(path, format!("must be an array, not {}", type_name(value)));
        return None;
    };
    let before = problems.len();
    if items.len() < min || items.len() > max {
        problems.add(path, format!("must have between {min} and {max} items"));
        if items.len() > max {
            // Its items are not walked: a megabyte of them would be as many problems.
            return None;
        }
    }
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if let Some(text) = string_value(item, &path.index(i), item_min, item_max, problems) {
            if !seen.insert(text.clone()) {
                problems.add(&path.index(i), format!("repeats {text:?}"));
            }
            out.push(text);
        }
    }
    (problems.len() == before).then_some(out)
}

pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Walk a whole document: no string (key or value) may contain NUL, which Postgres cannot
/// store, and nothing may nest deeper than `max_depth` (reported once, at `path`). Reports at
/// most a handful of offenders.
pub(crate) fn check_document(value: &Value, path: &Path, max_depth: usize, problems: &mut Problems) {
    struct Walk<'p> {
        root: &'p Path,
        max_depth: usize,
        problems: &'p mut Problems,
        budget: usize,
        too_deep: bool,
    }
    impl Walk<'_> {
        fn visit(&mut self, value: &Value, path: &Path, depth: usize) {
            if self.budget == 0 {
                return;
            }
            match value {
                Value::String(text) if text.contains('\0') => {
                    self.report(path, "must not contain the NUL character")
                }
                // Too deep: reported once, at the document's root (the deep path is useless).
                Value::Array(_) | Value::Object(_) if depth >= self.max_depth && !self.too_deep => {
                    self.too_deep = true;
                    let message = format!("nests deeper than {} levels", self.max_depth);
                    let root = self.root.clone();
                    self.report(&root, message);
                }
                Value::Array(_) | Value::Object(_) if depth >= self.max_depth => {}
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        self.visit(item, &path.index(i), depth + 1);
                    }
                }
                Value::Object(map) => {
                    for (key, item) in map {
                        let child = path.key(key);
                        if key.contains('\0') {
                            self.report(&child, "key must not contain the NUL character");
                        }
                        self.visit(item, &child, depth + 1);
                    }
                }
                _ => {}
            }
        }

        fn report(&mut self, path: &Path, message: impl Into<String>) {
            if self.budget > 0 {
                self.budget -= 1;
                self.problems.add(path, message);
            }
        }
    }
    Walk { root: path, max_depth, problems, budget: 20, too_deep: false }.visit(value, path, 0);
}
