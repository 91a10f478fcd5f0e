//! Property tests (a long run of them is `make chaos`'s fuzzing): parsing never panics and
//! always either accepts or explains, from raw bytes up; answers built
//! from valid requests pass; the checker never accepts what the schema refuses; hashing does
//! not depend on key order or number spelling.

use aitasks_contracts::{
    answer_schema, canonical_hash, check_answer, parse_json, AiRequest, CreateTask, FieldType, Path,
};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{json, Map, Value};

/// Cases per property: 400 in `make test`, many more in `make chaos` (`PROPTEST_CASES`).
pub(crate) fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(400)
}

/// Request bodies as bytes: random bytes, or a well-formed create body with a few bytes
/// overwritten, inserted or cut (invalid UTF-8, NUL, broken structure).
fn body_bytes() -> impl Strategy<Value = Vec<u8>> {
    let mutated = (any_json(), prop::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 0..6)).prop_map(
        |(request, edits)| {
            let mut bytes = json!({"owner": {"scopeId": "s"}, "stepKey": "s", "effectKey": "e",
                                   "modelId": "m", "request": request})
            .to_string()
            .into_bytes();
            for (at, byte, how) in edits {
                let at = at % (bytes.len() + 1);
                match how {
                    0 if at < bytes.len() => bytes[at] = byte,
                    1 => bytes.insert(at, byte),
                    _ => bytes.truncate(at),
                }
            }
            bytes
        },
    );
    prop_oneof![prop::collection::vec(any::<u8>(), 0..256), mutated]
}

pub(crate) fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        "[a-z]{0,6}".prop_map(Value::String),
        prop_oneof![
            Just("kind"),
            Just("classify"),
            Just("prompt"),
            Just("input"),
            Just("choices"),
            Just("generate_text"),
            Just("fields"),
            Just("text"),
            Just("\u{0}")
        ]
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    "[a-z]{1,5}",
                    Just("kind".to_owned()),
                    Just("prompt".to_owned()),
                    Just("input".to_owned()),
                    Just("choices".to_owned()),
                    Just("fields".to_owned()),
                    Just("minChoices".to_owned()),
                    Just("maxChoices".to_owned()),
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn choices() -> impl Strategy<Value = Vec<String>> {
    prop::collection::btree_set("[a-z]{1,8}", 2..8).prop_map(|set| set.into_iter().collect())
}

fn field_json() -> impl Strategy<Value = Value> {
    (
        prop_oneof![Just("text"), Just("number"), Just("boolean"), Just("date_time"), Just("choice")],
        any::<bool>(),
        choices(),
        1u32..40,
    )
        .prop_map(|(kind, required, choices, max_length)| {
            let mut field = json!({"type": kind, "description": "d", "required": required});
            if kind == "choice" {
                field["choices"] = json!(choices);
            }
            if kind == "text" {
                field["maxLength"] = json!(max_length);
            }
            field
        })
}

pub(crate) fn valid_request() -> impl Strategy<Value = AiRequest> {
    let input = || any_json().prop_filter("no NUL", |v| !v.to_string().contains("\\u0000"));
    prop_oneof![
        (input(), 1u32..500).prop_map(|(input, max)| json!({"kind": "generate_text", "prompt": "p", "input": input, "maxOutputChars": max})),
        (input(), choices()).prop_map(|(input, choices)| json!({"kind": "classify", "prompt": "p", "input": input, "choices": choices})),
        (input(), choices(), 0usize..3, 0usize..3).prop_map(|(input, choices, lo, extra)| {
            let min = lo.min(choices.len());
            let max = (min + extra).min(choices.len());
            json!({"kind": "classify_many", "prompt": "p", "input": input, "choices": choices, "minChoices": min, "maxChoices": max})
        }),
        (input(), prop::collection::vec(field_json(), 1..6)).prop_map(|(input, fields)| {
            let fields: Vec<Value> = fields.into_iter().enumerate().map(|(i, mut f)| { f["name"] = json!(format!("f_{i}")); f }).collect();
            json!({"kind": "extract_data", "prompt": "p", "input": input, "fields": fields})
        }),
    ]
    .prop_map(|value| AiRequest::parse(&value, &Path::root()).expect("generated requests are valid"))
}

/// An answer that satisfies everything the request demands, chosen by `seed`.
pub(crate) fn answer_for(request: &AiRequest, seed: u64) -> Value {
    match request {
        AiRequest::GenerateText(r) => {
            json!({"text": "x".repeat((seed % (u64::from(r.max_output_chars) + 1)) as usize)})
        }
        AiRequest::Classify(r) => json!({"choice": r.choices[seed as usize % r.choices.len()]}),
        AiRequest::ClassifyMany(r) => {
            let count =
                r.min_choices as usize + (seed as usize % (r.max_choices - r.min_choices + 1) as usize);
            // Out of order and with a repeat: the checker normalizes both.
            let mut picked: Vec<&String> = r.choices.iter().take(count).rev().collect();
            if let Some(first) = picked.first().copied() {
                picked.push(first);
            }
            json!({"choices": picked})
        }
        AiRequest::ExtractData(r) => {
            let mut answer = Map::new();
            for (i, field) in r.fields.iter().enumerate() {
                let omit = !field.required && (seed >> i) & 1 == 1;
                let value = if omit {
                    Value::Null
                } else {
                    match field.field_type {
                        FieldType::Text => json!("t".repeat(field.max_length.unwrap_or(1).min(5) as usize)),
                        FieldType::Number => json!(seed as f64 / 3.0),
                        FieldType::Boolean => json!(seed.is_multiple_of(2)),
                        FieldType::DateTime => json!("2026-11-29T10:00:00Z"),
                        FieldType::Choice => json!(field.choices.as_ref().expect("choices")[0]),
                    }
                };
                answer.insert(field.name.clone(), value);
            }
            Value::Object(answer)
        }
    }
}

fn schema_accepts(request: &AiRequest, answer: &Value) -> bool {
    jsonschema::options()
        .should_validate_formats(true)
        .build(&answer_schema(request))
        .expect("schema compiles")
        .is_valid(answer)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("tests/properties.proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_json_either_parses_or_explains(value in any_json()) {
        match AiRequest::parse(&value, &Path::root()) {
            Ok(request) => prop_assert_eq!(AiRequest::parse(&request.to_value(), &Path::root()).ok(), Some(request)),
            Err(problems) => prop_assert!(!problems.is_empty()),
        }
        let body = json!({"owner": {"scopeId": "s"}, "stepKey": "s", "effectKey": "e", "modelId": "m", "request": value});
        if let Err(problems) = CreateTask::parse(&body) {
            prop_assert!(!problems.is_empty());
        }
        if let Err(problems) = CreateTask::parse(&value) {
            prop_assert!(!problems.is_empty());
        }
    }

    #[test]
    fn any_body_bytes_either_parse_or_explain(bytes in body_bytes()) {
        if let Err(problems) = parse_json(&bytes).and_then(|value| CreateTask::parse(&value)) {
            prop_assert!(!problems.is_empty());
        }
    }

    #[test]
    fn answers_built_from_a_valid_request_pass_schema_and_checker(request in valid_request(), seed in any::<u64>()) {
        let answer = answer_for(&request, seed);
        prop_assert!(schema_accepts(&request, &answer), "schema refused {}", answer);
        let output = check_answer(&request, &answer);
        prop_assert!(output.is_ok(), "checker refused {}: {:?}", answer, output);
    }

    #[test]
    fn the_checker_never_accepts_what_the_schema_refuses(request in valid_request(), seed in any::<u64>(), noise in any_json()) {
        // Mutate a good answer in one place, or replace it with noise.
        let mut answer = answer_for(&request, seed);
        match (seed % 3, answer.as_object_mut()) {
            (0, _) => answer = noise,
            (1, Some(map)) => { if let Some(key) = map.keys().next().cloned() { map.insert(key, noise); } }
            (_, Some(map)) => { map.insert("extra".into(), noise); }
            _ => {}
        }
        if check_answer(&request, &answer).is_ok() {
            prop_assert!(schema_accepts(&request, &answer), "checker accepted {} which the schema refuses", answer);
        }
    }

    #[test]
    fn hashing_ignores_key_order_and_number_spelling(value in any_json()) {
        fn reversed(value: &Value) -> String {
            match value {
                Value::Object(map) => {
                    let parts: Vec<String> = map.iter().rev().map(|(k, v)| format!("{}:{}", Value::String(k.clone()), reversed(v))).collect();
                    format!("{{{}}}", parts.join(","))
                }
                Value::Array(items) => format!("[{}]", items.iter().map(reversed).collect::<Vec<_>>().join(",")),
                Value::Number(n) if n.as_i64().is_some_and(|i| i.abs() < 1 << 40) => format!("{}.0", n),
                other => other.to_string(),
            }
        }
        let respelled: Value = serde_json::from_str(&reversed(&value)).expect("valid JSON");
        prop_assert_eq!(canonical_hash(&value), canonical_hash(&respelled));
    }
}
