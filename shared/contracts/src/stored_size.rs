//! The size of a JSON value as Postgres stores it: the length in bytes of its `jsonb` text
//! (`octet_length(value::jsonb::text)`), computed without a round trip so that the 413 answer
//! comes before the model and run checks, as the contract orders them.
//!
//! `jsonb` text writes `": "` and `", "` separators, escapes strings like JSON, and prints
//! numbers as plain decimals (`1e3` becomes `1000`, `1.5e-7` becomes `0.00000015`).

use serde_json::Value;

/// Bytes of `value::jsonb::text`.
pub fn stored_size(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(number) => numeric_text_len(&number.to_string()),
        Value::String(text) => escaped_len(text),
        Value::Array(items) => {
            2 + items.iter().map(stored_size).sum::<usize>() + 2 * items.len().saturating_sub(1)
        }
        Value::Object(map) => {
            2 + map.iter().map(|(k, v)| escaped_len(k) + 2 + stored_size(v)).sum::<usize>()
                + 2 * map.len().saturating_sub(1)
        }
    }
}

fn escaped_len(text: &str) -> usize {
    2 + text
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\u{8}' | '\u{c}' | '\n' | '\r' | '\t' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum::<usize>()
}

/// Length of Postgres `numeric` output for a JSON number literal.
fn numeric_text_len(literal: &str) -> usize {
    let (negative, unsigned) = match literal.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, literal),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], unsigned[at + 1..].parse::<i64>().unwrap_or(0)),
        None => (unsigned, 0),
    };
    let (int_digits, frac_digits) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: Vec<u8> = int_digits.bytes().chain(frac_digits.bytes()).collect();
    let scale = (frac_digits.len() as i64 - exponent).max(0) as usize;
    // Position of the decimal point within `digits`.
    let point = int_digits.len() as i64 + exponent;
    let int_len = if point <= 0 {
        1
    } else {
        let within = (point as usize).min(digits.len());
        let leading_zeros = digits[..within].iter().take_while(|&&d| d == b'0').count();
        if leading_zeros == within {
            // Every integer digit present is zero; padding zeros alone still print as "0".
            1
        } else {
            point as usize - leading_zeros
        }
    };
    let is_zero = digits.iter().all(|&d| d == b'0');
    usize::from(negative && !is_zero) + int_len + if scale > 0 { 1 + scale } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_print_as_plain_decimals() {
        for (literal, text) in [
            ("0", "0"),
            ("42", "42"),
            ("-7", "-7"),
            ("1e3", "1000"),
            ("1.5e-7", "0.00000015"),
            ("100000.0", "100000.0"),
            ("-0.0", "0.0"),
            ("0.001", "0.001"),
            ("1.25e2", "125"),
            ("1.250e1", "12.50"),
            ("1e21", "1000000000000000000000"),
        ] {
            assert_eq!(numeric_text_len(literal), text.len(), "{literal} prints as {text}");
        }
    }

    #[test]
    fn containers_use_jsonb_spacing() {
        assert_eq!(stored_size(&json!({"a": [1, true, null]})), r#"{"a": [1, true, null]}"#.len());
        assert_eq!(stored_size(&json!({})), 2);
        assert_eq!(stored_size(&json!("a\"b\n\u{1}é")), r#""a\"b\n\u0001é""#.len());
    }
}
