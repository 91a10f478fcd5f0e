//! A table of malformed create bodies, each with the path its problem must name. Every row must
//! be refused; the path list must contain the expected path.

use aitasks_contracts::{parse_json, CreateTask};
use serde_json::{json, Value};

fn valid() -> Value {
    json!({
        "owner": {"scopeId": "s1", "usageSubject": {"type": "user", "id": "u1"}},
        "stepKey": "summarize",
        "effectKey": "run-7/summarize",
        "modelId": "default",
        "request": {"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"}, "choices": ["pos", "neg"]},
    })
}

fn with(path: &[&str], value: Value) -> Value {
    let mut body = valid();
    let mut cursor = &mut body;
    for key in &path[..path.len() - 1] {
        cursor = cursor.get_mut(*key).expect("path exists");
    }
    cursor[path[path.len() - 1]] = value;
    body
}

fn without(path: &[&str]) -> Value {
    let mut body = valid();
    let mut cursor = &mut body;
    for key in &path[..path.len() - 1] {
        cursor = cursor.get_mut(*key).expect("path exists");
    }
    cursor.as_object_mut().expect("object").remove(path[path.len() - 1]);
    body
}

fn request(value: Value) -> Value {
    with(&["request"], value)
}

fn deep(levels: usize) -> Value {
    let mut value = json!(1);
    for _ in 0..levels {
        value = json!([value]);
    }
    value
}

fn extract(fields: Value) -> Value {
    request(json!({"kind": "extract_data", "prompt": "p", "input": {}, "fields": fields}))
}

fn field(extra: Value) -> Value {
    let mut base = json!({"name": "title", "type": "text", "description": "d", "required": true});
    for (k, v) in extra.as_object().expect("object") {
        base[k] = v.clone();
    }
    base
}

fn many(extra: Value) -> Value {
    let mut base = json!({"kind": "classify_many", "prompt": "p", "input": 1, "choices": ["a", "b", "c"]});
    for (k, v) in extra.as_object().expect("object") {
        base[k] = v.clone();
    }
    request(base)
}

fn cases() -> Vec<(&'static str, Value, &'static str)> {
    let budget = json!({"burst": 5, "tasksPerMinute": 60, "maxStepsPerSource": 20, "sourcesPer24Hours": 100,
                        "scopeConcurrent": 4, "globalConcurrent": 100});
    let scope = |budget: Value| json!({"sourceId": "doc", "sourceRevision": "r1", "budget": budget});
    let budget_with = |key: &str, value: Value| {
        let mut b = budget.clone();
        b[key] = value;
        with(&["scope"], scope(b))
    };
    vec![
        ("body is an array", json!([1]), "$"),
        ("unknown top-level field", with(&["extra"], json!(1)), "extra"),
        ("neither runId nor owner", without(&["owner"]), "$"),
        ("both runId and owner", with(&["runId"], json!("8f0e5a8e-0c5e-4f43-9d39-8f1f3c0a9b11")), "$"),
        (
            "runId not a uuid",
            {
                let mut b = without(&["owner"]);
                b["runId"] = json!("run-7");
                b
            },
            "runId",
        ),
        (
            "runId a number",
            {
                let mut b = without(&["owner"]);
                b["runId"] = json!(7);
                b
            },
            "runId",
        ),
        ("owner without scopeId", with(&["owner"], json!({})), "owner.scopeId"),
        ("owner scopeId empty", with(&["owner", "scopeId"], json!("")), "owner.scopeId"),
        ("owner scopeId too long", with(&["owner", "scopeId"], json!("s".repeat(501))), "owner.scopeId"),
        ("owner unknown field", with(&["owner", "tenant"], json!("x")), "owner.tenant"),
        (
            "usageSubject without id",
            with(&["owner", "usageSubject"], json!({"type": "user"})),
            "owner.usageSubject.id",
        ),
        ("stepKey missing", without(&["stepKey"]), "stepKey"),
        ("stepKey too long", with(&["stepKey"], json!("k".repeat(1001))), "stepKey"),
        ("stepKey number", with(&["stepKey"], json!(5)), "stepKey"),
        ("effectKey empty", with(&["effectKey"], json!("")), "effectKey"),
        ("effectKey too long", with(&["effectKey"], json!("e".repeat(501))), "effectKey"),
        ("effectKey with NUL", with(&["effectKey"], json!("a\u{0}b")), "effectKey"),
        ("modelId too long", with(&["modelId"], json!("m".repeat(121))), "modelId"),
        ("request missing", without(&["request"]), "request"),
        ("request is a string", request(json!("classify")), "request"),
        ("kind missing", request(json!({"prompt": "p"})), "request.kind"),
        ("kind unknown", request(json!({"kind": "translate", "prompt": "p"})), "request.kind"),
        ("prompt empty", with(&["request", "prompt"], json!("")), "request.prompt"),
        ("prompt too long", with(&["request", "prompt"], json!("p".repeat(20_001))), "request.prompt"),
        ("prompt with NUL", with(&["request", "prompt"], json!("p\u{0}")), "request.prompt"),
        ("classify without input", without(&["request", "input"]), "request.input"),
        (
            "input with NUL in a nested string",
            with(&["request", "input"], json!({"a": ["x\u{0}"]})),
            "request.input.a[0]",
        ),
        ("input nested 65 deep", with(&["request", "input"], deep(65)), "request.input"),
        ("unknown request field", with(&["request", "temperature"], json!(0.2)), "request.temperature"),
        ("choices missing", without(&["request", "choices"]), "request.choices"),
        ("one choice", with(&["request", "choices"], json!(["a"])), "request.choices"),
        (
            "201 choices",
            with(&["request", "choices"], json!((0..201).map(|i| i.to_string()).collect::<Vec<_>>())),
            "request.choices",
        ),
        ("duplicate choice", with(&["request", "choices"], json!(["a", "b", "a"])), "request.choices[2]"),
        ("empty choice", with(&["request", "choices"], json!(["a", ""])), "request.choices[1]"),
        (
            "choice too long",
            with(&["request", "choices"], json!(["a", "c".repeat(201)])),
            "request.choices[1]",
        ),
        ("choice not a string", with(&["request", "choices"], json!(["a", 2])), "request.choices[1]"),
        (
            "maxOutputChars zero",
            request(json!({"kind": "generate_text", "prompt": "p", "maxOutputChars": 0})),
            "request.maxOutputChars",
        ),
        (
            "maxOutputChars too big",
            request(json!({"kind": "generate_text", "prompt": "p", "maxOutputChars": 100_001})),
            "request.maxOutputChars",
        ),
        (
            "maxOutputChars fractional",
            request(json!({"kind": "generate_text", "prompt": "p", "maxOutputChars": 10.5})),
            "request.maxOutputChars",
        ),
        (
            "maxOutputChars huge",
            request(json!({"kind": "generate_text", "prompt": "p", "maxOutputChars": 1e300})),
            "request.maxOutputChars",
        ),
        (
            "generate_text with choices",
            request(json!({"kind": "generate_text", "prompt": "p", "choices": ["a", "b"]})),
            "request.choices",
        ),
        ("minChoices negative", many(json!({"minChoices": -1})), "request.minChoices"),
        ("minChoices above n", many(json!({"minChoices": 4})), "request.minChoices"),
        (
            "maxChoices below minChoices",
            many(json!({"minChoices": 2, "maxChoices": 1})),
            "request.maxChoices",
        ),
        ("maxChoices above n", many(json!({"maxChoices": 4})), "request.maxChoices"),
        ("maxChoices string", many(json!({"maxChoices": "2"})), "request.maxChoices"),
        (
            "fields missing",
            request(json!({"kind": "extract_data", "prompt": "p", "input": {}})),
            "request.fields",
        ),
        ("fields empty", extract(json!([])), "request.fields"),
        (
            "101 fields",
            extract(json!((0..101).map(|i| field(json!({"name": format!("f{i}")}))).collect::<Vec<_>>())),
            "request.fields",
        ),
        (
            "duplicate field names",
            extract(json!([field(json!({})), field(json!({}))])),
            "request.fields[1].name",
        ),
        (
            "field name with a dash",
            extract(json!([field(json!({"name": "first-name"}))])),
            "request.fields[0].name",
        ),
        (
            "field name starting with a digit",
            extract(json!([field(json!({"name": "1st"}))])),
            "request.fields[0].name",
        ),
        (
            "field name too long",
            extract(json!([field(json!({"name": "n".repeat(65)}))])),
            "request.fields[0].name",
        ),
        ("field type unknown", extract(json!([field(json!({"type": "integer"}))])), "request.fields[0].type"),
        (
            "field description too long",
            extract(json!([field(json!({"description": "d".repeat(1001)}))])),
            "request.fields[0].description",
        ),
        (
            "field required not a boolean",
            extract(json!([field(json!({"required": "yes"}))])),
            "request.fields[0].required",
        ),
        (
            "maxLength on a number field",
            extract(json!([field(json!({"type": "number", "maxLength": 5}))])),
            "request.fields[0].maxLength",
        ),
        ("maxLength zero", extract(json!([field(json!({"maxLength": 0}))])), "request.fields[0].maxLength"),
        (
            "maxLength above 20000",
            extract(json!([field(json!({"maxLength": 20_001}))])),
            "request.fields[0].maxLength",
        ),
        (
            "choice field without choices",
            extract(json!([field(json!({"type": "choice"}))])),
            "request.fields[0].choices",
        ),
        (
            "choices on a text field",
            extract(json!([field(json!({"choices": ["a", "b"]}))])),
            "request.fields[0].choices",
        ),
        (
            "choice field with a duplicate choice",
            extract(json!([field(json!({"type": "choice", "choices": ["a", "a"]}))])),
            "request.fields[0].choices[1]",
        ),
        (
            "unknown field key",
            extract(json!([field(json!({"format": "email"}))])),
            "request.fields[0].format",
        ),
        (
            "scope without budget",
            with(&["scope"], json!({"sourceId": "d", "sourceRevision": "r"})),
            "scope.budget",
        ),
        (
            "scope sourceId empty",
            with(&["scope"], json!({"sourceId": "", "sourceRevision": "r", "budget": budget})),
            "scope.sourceId",
        ),
        ("negative burst", budget_with("burst", json!(-1)), "scope.budget.burst"),
        ("zero tasksPerMinute", budget_with("tasksPerMinute", json!(0)), "scope.budget.tasksPerMinute"),
        (
            "fractional maxStepsPerSource",
            budget_with("maxStepsPerSource", json!(2.5)),
            "scope.budget.maxStepsPerSource",
        ),
        (
            "budget above the safe integers",
            budget_with("scopeConcurrent", json!(9_007_199_254_740_992_i64)),
            "scope.budget.scopeConcurrent",
        ),
        ("budget field unknown", budget_with("daily", json!(1)), "scope.budget.daily"),
        (
            "recompute a string",
            with(
                &["scope"],
                json!({"sourceId": "d", "sourceRevision": "r", "recompute": "yes", "budget": budget}),
            ),
            "scope.recompute",
        ),
    ]
}

#[test]
fn every_malformed_body_is_refused_with_its_path() {
    let cases = cases();
    assert!(cases.len() >= 40, "the table keeps at least 40 rows");
    let mut failures = Vec::new();
    for (name, body, expected_path) in cases {
        match CreateTask::parse(&body) {
            Ok(_) => failures.push(format!("{name}: accepted")),
            Err(problems) => {
                if !problems.paths().contains(&expected_path) {
                    failures.push(format!("{name}: expected {expected_path}, got {problems}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_problem_is_reported_at_once() {
    let mut body = valid();
    body["stepKey"] = json!("");
    body["effectKey"] = json!(1);
    body["request"]["choices"] = json!(["a"]);
    body["request"]["prompt"] = json!("");
    let problems = CreateTask::parse(&body).unwrap_err();
    let paths = problems.paths();
    for path in ["stepKey", "effectKey", "request.choices", "request.prompt"] {
        assert!(paths.contains(&path), "{path} missing from {problems}");
    }
}

#[test]
fn a_valid_body_parses_and_fills_the_defaults() {
    let created = CreateTask::parse(&valid()).expect("valid");
    assert_eq!(created.effect_key.as_str(), "run-7/summarize");
    let body =
        request(json!({"kind": "classify_many", "prompt": "p", "input": 1, "choices": ["a", "b", "c"]}));
    let parsed = CreateTask::parse(&body).expect("valid");
    let stored = parsed.request.to_value();
    assert_eq!(stored["minChoices"], 0);
    assert_eq!(stored["maxChoices"], 3);
    let text = CreateTask::parse(&request(json!({"kind": "generate_text", "prompt": "p"}))).expect("valid");
    assert_eq!(text.request.to_value()["maxOutputChars"], 4000);
    // 64 levels of nesting in input is the limit, not over it.
    assert!(CreateTask::parse(&with(&["request", "input"], deep(64))).is_ok());
}

#[test]
fn malformed_json_is_one_problem_at_the_root() {
    for bytes in
        [&b"{"[..], b"{\"a\": 1,}", b"\xff\xfe", b"{\"n\": 1e400}", b"", &"[".repeat(10_000).into_bytes()]
    {
        let problems = parse_json(bytes).unwrap_err();
        assert_eq!(problems.paths(), vec!["$"]);
    }
    assert!(parse_json(b"{\"n\": 18446744073709551616}").is_ok(), "integers beyond u64 still fit a double");
}

/// JSON has one number type: `5.0` and `1e3` are integers to any JavaScript client (the reference
/// checks `Number.isSafeInteger`), so they are accepted wherever an integer is required, and
/// stored (and hashed) as the integer they are.
#[test]
fn integer_valued_numbers_are_integers() {
    let text =
        CreateTask::parse(&request(json!({"kind": "generate_text", "prompt": "p", "maxOutputChars": 1e3})))
            .expect("1e3 is the integer 1000");
    assert_eq!(text.request.to_value()["maxOutputChars"], json!(1000));
    let plain =
        CreateTask::parse(&request(json!({"kind": "generate_text", "prompt": "p", "maxOutputChars": 1000})))
            .expect("valid");
    assert_eq!(
        aitasks_contracts::request_hash(&text.request),
        aitasks_contracts::request_hash(&plain.request)
    );

    let many = CreateTask::parse(&many(json!({"minChoices": 1.0, "maxChoices": 2e0}))).expect("1.0 and 2e0");
    assert_eq!(many.request.to_value()["minChoices"], json!(1));
    assert_eq!(many.request.to_value()["maxChoices"], json!(2));

    let budget = json!({"burst": 5.0, "tasksPerMinute": 6e1, "maxStepsPerSource": 20, "sourcesPer24Hours": 1e2,
                        "scopeConcurrent": 4.0, "globalConcurrent": 100});
    let scoped = CreateTask::parse(&with(
        &["scope"],
        json!({"sourceId": "doc", "sourceRevision": "r1", "budget": budget}),
    ))
    .expect("integer-valued budget");
    let budget = scoped.scope.expect("scope").budget;
    assert_eq!((budget.burst, budget.tasks_per_minute, budget.sources_per24_hours), (5, 60, 100));
    // The largest safe integer written as a double is still one; one past it is not.
    assert!(CreateTask::parse(&with(
        &["scope"],
        json!({"sourceId": "d", "sourceRevision": "r", "budget": {"burst": 5, "tasksPerMinute": 60,
               "maxStepsPerSource": 20, "sourcesPer24Hours": 100, "scopeConcurrent": 9007199254740991.0,
               "globalConcurrent": 100}}),
    ))
    .is_ok());
}
