//! Problems are bounded where they are collected: an array over its limit is one problem (its
//! items are not walked), a document lists at most `PROBLEMS_MAX` problems and counts the rest,
//! and a path that echoes a huge key is cut short. A megabyte of bad input is a few kilobytes
//! of problems, in memory and in the answer.

use aitasks_contracts::{CreateTask, PROBLEMS_MAX, PROBLEM_PATH_MAX_CHARS};
use serde_json::{json, Map, Value};

fn classify(choices: Value) -> Value {
    json!({
        "owner": {"scopeId": "s1"}, "stepKey": "s", "effectKey": "k", "modelId": "default",
        "request": {"kind": "classify", "prompt": "p", "input": 1, "choices": choices},
    })
}

#[test]
fn an_array_over_its_limit_is_one_problem_and_is_not_walked() {
    // About a megabyte: 500000 items, each of them a wrong type and a repeat.
    let problems = CreateTask::parse(&classify(json!(vec![1; 500_000]))).unwrap_err();
    assert_eq!(problems.paths(), ["request.choices"], "{problems}");
    assert_eq!(problems.len(), 1);

    let fields: Vec<Value> = (0..50_000).map(|_| json!({"name": 1})).collect();
    let body = json!({
        "owner": {"scopeId": "s1"}, "stepKey": "s", "effectKey": "k", "modelId": "default",
        "request": {"kind": "extract_data", "prompt": "p", "input": {}, "fields": fields},
    });
    let problems = CreateTask::parse(&body).unwrap_err();
    assert_eq!(problems.paths(), ["request.fields"], "{problems}");

    let choice_field = json!({"name": "c", "type": "choice", "description": "", "required": true,
                              "choices": vec![json!(null); 10_000]});
    let body = json!({
        "owner": {"scopeId": "s1"}, "stepKey": "s", "effectKey": "k", "modelId": "default",
        "request": {"kind": "extract_data", "prompt": "p", "input": {}, "fields": [choice_field]},
    });
    let problems = CreateTask::parse(&body).unwrap_err();
    assert_eq!(problems.paths(), ["request.fields[0].choices"], "{problems}");
}

#[test]
fn a_document_lists_the_first_problems_and_counts_the_rest() {
    // 200 choices (the limit), every one of them a number: 200 problems found, 50 listed.
    let problems = CreateTask::parse(&classify(json!(vec![7; 200]))).unwrap_err();
    assert_eq!(problems.iter().count(), PROBLEMS_MAX, "the first {PROBLEMS_MAX} are listed");
    assert_eq!(problems.len(), 200, "and all of them are counted");
    assert_eq!(problems.more(), 200 - PROBLEMS_MAX);
    assert_eq!(problems.paths()[0], "request.choices[0]", "in the order found");
    assert!(problems.to_string().ends_with("and 150 more problems"), "{problems}");

    // 100000 unknown top-level fields.
    let mut body = classify(json!(["a", "b"]));
    let object = body.as_object_mut().unwrap();
    for i in 0..100_000 {
        object.insert(format!("extra{i}"), json!(1));
    }
    let problems = CreateTask::parse(&body).unwrap_err();
    assert_eq!((problems.iter().count(), problems.len()), (PROBLEMS_MAX, 100_000));
}

#[test]
fn a_path_that_echoes_a_huge_key_is_cut_short() {
    let key = "\"".repeat(500_000);
    let mut body = classify(json!(["a", "b"]));
    body["request"][key.as_str()] = json!(1);
    let mut input = Map::new();
    input.insert(format!("{key}\u{0}"), json!(1));
    body["request"]["input"] = Value::Object(input);
    let problems = CreateTask::parse(&body).unwrap_err();
    assert_eq!(problems.len(), 2, "{problems}");
    for problem in problems.iter() {
        let length = problem.path.chars().count();
        assert!(length <= PROBLEM_PATH_MAX_CHARS, "a path of {length} characters");
        assert!(problem.path.starts_with("request."), "{}", problem.path);
        assert!(problem.path.ends_with('…'), "a cut path says so: {}", problem.path);
    }
}
