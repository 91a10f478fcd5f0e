//! Our answer-schema checker (`schema_problems`) against the `jsonschema` crate: on every
//! generated request, in both dialects, the two give the same verdict on a good answer and on
//! the same answer with one value swapped for a near miss (a wrong type, an undeclared choice, a
//! bad date-time, a string past its length, an extra or missing property) or for noise.

use aitasks_contracts::{answer_schema_for, schema_problems, AiRequest, SchemaDialect};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{json, Value};

use crate::properties::{answer_for, any_json, cases, valid_request};

/// Date-times on every edge where RFC 3339, JSON Schema's `date-time` and chrono's reading of it
/// could part: leap seconds (only at 23:59 UTC), offsets at their limits, a Unicode minus sign,
/// separators, fractions, the ends of the calendar, a non-ASCII digit.
const DATE_TIMES: &[&str] = &[
    "2026-12-31T23:59:60Z",
    "2026-12-31T23:59:60.5Z",
    "2026-01-01T12:00:60Z",
    "2027-01-01T00:59:60+01:00",
    "2026-12-31T23:59:60+01:00",
    "2026-01-01T00:00:00\u{2212}05:00",
    "2026-01-01T00:00:00+23:59",
    "2026-01-01T00:00:00+24:00",
    "2026-01-01T00:00:00-00:00",
    "2026-01-01T00:00:00+0100",
    "2026-01-01T00:00:00.000000000001Z",
    "2026-01-01T00:00:00.Z",
    "2026-01-01T00:00Z",
    "2026-02-29T00:00:00Z",
    "2024-02-29T00:00:00Z",
    "0000-02-29T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "2026-1-01T00:00:00Z",
    "2026-01-01T24:00:00Z",
    "2026-01-01T00:60:00Z",
    "2026-01-01T00:00:00Z ",
    "\u{0661}026-01-01T00:00:00Z",
];

fn request(value: Value) -> AiRequest {
    AiRequest::parse(&value, &aitasks_contracts::Path::root()).expect("valid request")
}

fn oracle_accepts(schema: &Value, answer: &Value) -> bool {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .expect("schema compiles")
        .is_valid(answer)
}

/// Values that sit just inside or just outside what some keyword allows.
fn near_misses(request: &AiRequest) -> Vec<Value> {
    let mut pool = vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(1.0),
        json!(-2.5),
        json!(""),
        json!("x".repeat(600)),
        json!([]),
        json!({}),
        json!("2026-11-29T10:00:00Z"),
        json!("2026-11-29T10:00:00.123+01:00"),
        json!("2026-11-29t10:00:00z"),
        json!("2026-11-29T10:00:00"),
        json!("2026-11-29 10:00:00Z"),
        json!("2026-13-01T10:00:00Z"),
        json!("2026-11-29T25:00:00Z"),
        json!("next tuesday"),
    ];
    pool.extend(DATE_TIMES.iter().map(|text| json!(text)));
    // Strings at a length bound and one past it, in characters of two bytes (a bound counts
    // characters, not bytes).
    let lengths: Vec<u32> = match request {
        AiRequest::GenerateText(r) => vec![r.max_output_chars],
        AiRequest::ExtractData(r) => r.fields.iter().filter_map(|f| f.max_length).collect(),
        _ => Vec::new(),
    };
    for length in lengths {
        pool.push(json!("é".repeat(length as usize)));
        pool.push(json!("é".repeat(length as usize + 1)));
    }
    let choices: Vec<String> = match request {
        AiRequest::Classify(r) => r.choices.clone(),
        AiRequest::ClassifyMany(r) => r.choices.clone(),
        AiRequest::ExtractData(r) => {
            r.fields.iter().flat_map(|f| f.choices.clone().unwrap_or_default()).collect()
        }
        AiRequest::GenerateText(_) => Vec::new(),
    };
    for choice in &choices {
        pool.push(json!(choice));
        pool.push(json!(choice.to_uppercase()));
        pool.push(json!([choice]));
    }
    // Arrays of every count from none to one past all the choices (the count bounds).
    for count in 0..=choices.len() + 1 {
        pool.push(json!(choices.iter().cycle().take(count).collect::<Vec<_>>()));
    }
    pool.push(json!([choices.first(), "not-a-choice"]));
    pool
}

/// The answer with one place changed, chosen by `seed`: a property's value, an array item, a new
/// property, a removed property, or the whole answer.
fn mutate(mut answer: Value, seed: u64, replacement: Value) -> Value {
    let Some(map) = answer.as_object_mut() else { return replacement };
    let keys: Vec<String> = map.keys().cloned().collect();
    let key = keys.get((seed / 7) as usize % keys.len().max(1)).cloned();
    match (seed % 5, key) {
        (0, Some(key)) => {
            map.insert(key, replacement);
        }
        (1, Some(key)) => match map.get_mut(&key) {
            Some(Value::Array(items)) if !items.is_empty() => {
                let at = (seed / 3) as usize % items.len();
                items[at] = replacement;
            }
            _ => {
                map.insert(key, replacement);
            }
        },
        (2, _) => {
            map.insert("extra".into(), replacement);
        }
        (3, Some(key)) => {
            map.remove(&key);
        }
        _ => return replacement,
    }
    answer
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("tests/schema_agreement.proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_checker_and_jsonschema_agree(
        request in valid_request(),
        seed in any::<u64>(),
        pick in any::<usize>(),
        noise in any_json(),
    ) {
        let good = answer_for(&request, seed);
        let pool = near_misses(&request);
        let replacement = if pick % 4 == 0 { noise } else { pool[pick % pool.len()].clone() };
        let changed = mutate(good.clone(), seed, replacement);
        for dialect in [SchemaDialect::Strict, SchemaDialect::Full] {
            let schema = answer_schema_for(&request, dialect);
            for answer in [&good, &changed] {
                let ours = schema_problems(&schema, answer);
                prop_assert_eq!(
                    ours.is_empty(),
                    oracle_accepts(&schema, answer),
                    "{:?} schema {} answer {}: ours says {}",
                    dialect, schema, answer, ours
                );
            }
        }
    }
}

#[test]
fn each_problem_names_the_value_to_fix() {
    let request = request(json!({"kind": "extract_data", "prompt": "p", "input": {}, "fields": [
        {"name": "title", "type": "text", "description": "", "required": true},
        {"name": "due", "type": "date_time", "description": "", "required": false},
        {"name": "tone", "type": "choice", "description": "", "required": true, "choices": ["calm", "angry"]},
    ]}));
    let schema = answer_schema_for(&request, SchemaDialect::Strict);
    let problems = schema_problems(&schema, &json!({"title": 3, "due": "soon", "invented": true}));
    let mut listed: Vec<(&str, &str)> =
        problems.iter().map(|p| (p.path.as_str(), p.message.as_str())).collect();
    listed.sort();
    assert_eq!(
        listed,
        vec![
            ("due", "must be an RFC 3339 date-time with an offset"),
            ("invented", "is not a declared property"),
            ("title", "must be a string, not a number"),
            ("tone", "is required"),
        ],
        "{problems}"
    );
    let wrong_choice = schema_problems(&schema, &json!({"title": "t", "due": null, "tone": "happy"}));
    assert_eq!(wrong_choice.paths(), vec!["tone"], "{wrong_choice}");
    assert!(wrong_choice.to_string().contains(r#"must be one of "calm", "angry""#), "{wrong_choice}");
}

#[test]
fn a_keyword_the_checker_does_not_know_refuses_rather_than_passes() {
    let schema = json!({"type": "object", "properties": {"n": {"type": "number", "minimum": 3}}});
    let problems = schema_problems(&schema, &json!({"n": 5}));
    assert_eq!(problems.paths(), vec!["n"], "{problems}");
    assert!(problems.to_string().contains("minimum"), "{problems}");
}

#[test]
fn date_times_on_every_edge_get_the_oracles_verdict() {
    let schema = json!({"type": "string", "format": "date-time"});
    for text in DATE_TIMES {
        let answer = json!(text);
        let ours = schema_problems(&schema, &answer);
        assert_eq!(ours.is_empty(), oracle_accepts(&schema, &answer), "{text:?}: ours says {ours}");
    }
}

/// A wrong value in each of a million items is counted, not described a million times: the
/// listing stops at the problems' bound and the walk stays linear (a 16 MiB answer is about
/// this many items).
#[test]
fn a_million_wrong_items_are_counted_and_fifty_described() {
    let choices: Vec<String> = (0..200).map(|i| format!("{i:0>100}")).collect();
    let request = request(json!({"kind": "classify_many", "prompt": "p", "input": 1, "choices": choices}));
    let answer = json!({"choices": vec![1; 1_000_000]});
    let started = std::time::Instant::now();
    let problems = schema_problems(&answer_schema_for(&request, SchemaDialect::Strict), &answer);
    assert_eq!(problems.len(), 2_000_000, "a type and an enum problem an item");
    assert_eq!(problems.listed().len(), 50);
    assert!(problems.listed().iter().all(|p| p.message.len() < 5_000), "{}", problems.listed()[1].message);
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "took {:?}", started.elapsed());
}

#[test]
fn a_declared_field_named_extra_is_a_plain_key() {
    let request = request(json!({"kind": "extract_data", "prompt": "p", "input": {}, "fields": [
        {"name": "extra", "type": "number", "description": "", "required": true},
        {"name": "_b", "type": "boolean", "description": "", "required": false},
    ]}));
    let schema = answer_schema_for(&request, SchemaDialect::Strict);
    for answer in [
        json!({"extra": 1, "_b": null}),
        json!({"extra": "1", "_b": true}),
        json!({"extra": 1}),
        json!({"extra": 1, "_b": false, "more": 2}),
    ] {
        assert_eq!(
            schema_problems(&schema, &answer).is_empty(),
            oracle_accepts(&schema, &answer),
            "{answer}"
        );
    }
}
