//! A model's answer may hold a NUL character, which Postgres cannot store (`jsonb` refuses
//! `\u0000`). What the batcher keeps of one (an invalid answer's repair turn) has each NUL
//! replaced by U+FFFD, the replacement character, in strings and object keys alike.

use serde_json::Value;

const REPLACEMENT: &str = "\u{FFFD}";

/// Replace every NUL in `value`'s strings and keys.
pub(super) fn replace_nul(value: &mut Value) {
    match value {
        Value::String(text) if text.contains('\0') => *text = text.replace('\0', REPLACEMENT),
        Value::Array(items) => items.iter_mut().for_each(replace_nul),
        Value::Object(map) if map.keys().any(|key| key.contains('\0')) => {
            let entries = std::mem::take(map);
            for (key, mut item) in entries {
                replace_nul(&mut item);
                map.insert(key.replace('\0', REPLACEMENT), item);
            }
        }
        Value::Object(map) => map.values_mut().for_each(replace_nul),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_nul_goes_keys_and_nested_strings_alike() {
        let mut value = json!({"a\u{0}": ["x\u{0}y", {"k": "\u{0}"}], "n": 1, "plain": "ok"});
        replace_nul(&mut value);
        assert_eq!(value, json!({"a\u{FFFD}": ["x\u{FFFD}y", {"k": "\u{FFFD}"}], "n": 1, "plain": "ok"}));
        assert!(!value.to_string().contains("\\u0000"));
    }
}
