//! The answer checker per kind, and the shape of the strict-mode schemas.

use aitasks_contracts::{answer_schema, check_answer, AiRequest, Path};
use serde_json::{json, Value};

fn parse(request: Value) -> AiRequest {
    AiRequest::parse(&request, &Path::root().key("request")).expect("valid request")
}

fn extract() -> AiRequest {
    parse(json!({"kind": "extract_data", "prompt": "p", "input": {}, "fields": [
        {"name": "title", "type": "text", "description": "the title", "required": true, "maxLength": 10},
        {"name": "pages", "type": "number", "description": "", "required": false},
        {"name": "draft", "type": "boolean", "description": "", "required": false},
        {"name": "due", "type": "date_time", "description": "", "required": false},
        {"name": "tone", "type": "choice", "description": "", "required": true, "choices": ["calm", "angry"]},
    ]}))
}

#[test]
fn generate_text_returns_the_text_within_its_limit() {
    let request = parse(json!({"kind": "generate_text", "prompt": "p", "maxOutputChars": 5}));
    assert_eq!(check_answer(&request, &json!({"text": "héllo"})).unwrap(), json!("héllo"));
    let too_long = check_answer(&request, &json!({"text": "héllo!"})).unwrap_err();
    assert_eq!(too_long.paths(), vec!["text"]);
    assert!(check_answer(&request, &json!({"text": "hi", "extra": 1})).is_err());
    assert!(check_answer(&request, &json!({})).is_err());
    assert!(check_answer(&request, &json!("hi")).is_err());
}

#[test]
fn classify_returns_one_declared_choice() {
    let request = parse(json!({"kind": "classify", "prompt": "p", "input": 1, "choices": ["pos", "neg"]}));
    assert_eq!(check_answer(&request, &json!({"choice": "neg"})).unwrap(), json!("neg"));
    let wrong = check_answer(&request, &json!({"choice": "meh"})).unwrap_err();
    assert_eq!(wrong.paths(), vec!["choice"]);
}

#[test]
fn classify_many_is_distinct_in_declared_order_within_bounds() {
    let request = parse(json!({"kind": "classify_many", "prompt": "p", "input": 1,
                               "choices": ["a", "b", "c", "d"], "minChoices": 1, "maxChoices": 2}));
    assert_eq!(check_answer(&request, &json!({"choices": ["c", "a", "c"]})).unwrap(), json!(["a", "c"]));
    assert_eq!(check_answer(&request, &json!({"choices": []})).unwrap_err().paths(), vec!["choices"]);
    assert_eq!(
        check_answer(&request, &json!({"choices": ["a", "b", "c"]})).unwrap_err().paths(),
        vec!["choices"]
    );
    assert_eq!(
        check_answer(&request, &json!({"choices": ["a", "z"]})).unwrap_err().paths(),
        vec!["choices[1]"]
    );
}

#[test]
fn extract_data_keeps_declared_fields_and_drops_nulls() {
    let request = extract();
    let output = check_answer(
        &request,
        &json!({"title": "Q3 plan", "pages": 12.5, "draft": null, "due": "2026-12-01T09:30:00+01:00", "tone": "calm"}),
    )
    .unwrap();
    assert_eq!(
        output,
        json!({"title": "Q3 plan", "pages": 12.5, "due": "2026-12-01T09:30:00+01:00", "tone": "calm"})
    );
}

#[test]
fn extract_data_refuses_what_the_request_forbids() {
    let request = extract();
    let base = json!({"title": "t", "pages": null, "draft": null, "due": null, "tone": "calm"});
    let cases = [
        ("title", json!("0123456789x")),
        ("title", Value::Null),
        ("due", json!("2026-12-01T09:30:00")),
        ("due", json!("next tuesday")),
        ("tone", json!("happy")),
        ("pages", json!("12")),
    ];
    for (field, value) in cases {
        let mut answer = base.clone();
        answer[field] = value.clone();
        let problems = check_answer(&request, &answer).expect_err(&format!("{field} = {value}"));
        assert!(problems.paths().contains(&field), "{field} = {value}: {problems}");
    }
    let mut extra = base.clone();
    extra["invented"] = json!(1);
    assert!(check_answer(&request, &extra).is_err(), "undeclared fields are refused");
}

#[test]
fn schemas_are_strict_mode_shaped() {
    let schema = answer_schema(&extract());
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(
        schema["required"],
        json!(["title", "pages", "draft", "due", "tone"]),
        "every property required"
    );
    assert_eq!(schema["properties"]["pages"]["type"], json!(["number", "null"]), "optional means nullable");
    assert_eq!(schema["properties"]["title"]["type"], json!("string"));
    assert_eq!(schema["properties"]["due"]["format"], "date-time");
    assert_eq!(schema["properties"]["tone"]["enum"], json!(["calm", "angry"]));
    let many = parse(json!({"kind": "classify_many", "prompt": "p", "input": 1, "choices": ["a", "b"]}));
    assert_eq!(answer_schema(&many)["properties"]["choices"]["items"]["enum"], json!(["a", "b"]));
}

#[test]
fn the_full_dialect_adds_the_bounds_strict_mode_cannot_take() {
    use aitasks_contracts::{answer_schema_for, SchemaDialect};
    let many = parse(
        json!({"kind": "classify_many", "prompt": "p", "input": 1, "choices": ["a", "b", "c"], "minChoices": 1, "maxChoices": 2}),
    );
    let strict = answer_schema_for(&many, SchemaDialect::Strict);
    assert!(
        strict["properties"]["choices"].get("maxItems").is_none(),
        "OpenAI strict mode refuses count bounds"
    );
    let full = answer_schema_for(&many, SchemaDialect::Full);
    assert_eq!(
        (
            full["properties"]["choices"]["minItems"].as_u64(),
            full["properties"]["choices"]["maxItems"].as_u64()
        ),
        (Some(1), Some(2))
    );
    let text = parse(json!({"kind": "generate_text", "prompt": "p", "maxOutputChars": 30}));
    assert_eq!(answer_schema_for(&text, SchemaDialect::Full)["properties"]["text"]["maxLength"], 30);
    assert_eq!(answer_schema_for(&extract(), SchemaDialect::Full)["properties"]["title"]["maxLength"], 10);
}

/// Postgres cannot store a NUL (`jsonb` refuses `\u0000`): an answer holding one anywhere is
/// refused by the checker like any invalid answer, so it gets its repair turn and never reaches
/// the statement that would store it.
#[test]
fn an_answer_with_a_nul_anywhere_is_invalid() {
    let text = parse(json!({"kind": "generate_text", "prompt": "p"}));
    let refused = check_answer(&text, &json!({"text": "a\u{0}b"})).unwrap_err();
    assert_eq!(refused.paths(), vec!["text"], "{refused}");
    assert!(refused.to_string().contains("NUL"), "{refused}");
    let extract = extract();
    let in_a_field = json!({"title": "ok", "tone": "calm", "pages": null, "draft": null, "due": null});
    assert!(check_answer(&extract, &in_a_field).is_ok(), "the same answer without a NUL is fine");
    let mut nul_value = in_a_field.clone();
    nul_value["title"] = json!("o\u{0}k");
    assert_eq!(check_answer(&extract, &nul_value).unwrap_err().paths(), vec!["title"]);
    let mut nul_key = in_a_field.clone();
    nul_key["ti\u{0}tle"] = json!("x");
    assert!(check_answer(&extract, &nul_key).is_err(), "a NUL in a key is refused too");
    let choose = parse(json!({"kind": "classify", "prompt": "p", "input": "x", "choices": ["a", "b"]}));
    assert!(check_answer(&choose, &json!({"choice": "a\u{0}"})).is_err());
}
