//! Bounded answers, measured as Lambda returns them: the response document with the body as a
//! JSON string in it (every `"`, `\` and control character of the answer escaped once more),
//! which Lambda refuses over 6 MB. A megabyte of bad input is a small 400 that says how many
//! problems it left out; a batch of a thousand bad items is a small answer; and the answers that
//! carry outputs (a listing's page, a finished batch sent again) stay under the limit with
//! outputs full of characters that double when escaped, saying what they left out.

use std::time::Duration;

use aitasks_contracts::{MAX_BULK_BODY_BYTES, MAX_CREATE_BODY_BYTES};
use aitasks_testkit::*;
use reqwest::Method;
use serde_json::{json, Value};

const APP: &str = "app-bounded";
/// Lambda's response limit, with the margin the answers keep.
const LAMBDA_RESPONSE_LIMIT: usize = 6_000_000;

fn valid() -> Value {
    json!({"owner": {"scopeId": "s1"}, "stepKey": "step", "effectKey": "key", "modelId": "default",
           "request": {"kind": "classify", "prompt": "Sentiment?", "input": "great", "choices": ["pos", "neg"]}})
}

/// The bytes of the response Lambda would return for this answer.
fn lambda_bytes(answer: &Answer) -> usize {
    json!({"statusCode": answer.status, "headers": {"content-type": "application/json"},
           "multiValueHeaders": {}, "body": answer.body.to_string(), "isBase64Encoded": false})
    .to_string()
    .len()
}

async fn post(api: &Api, path: &str, body: &Value) -> Answer {
    api.send(Method::POST, path, Some(body.to_string().into_bytes())).await
}

fn details(error: &Value) -> usize {
    error["details"].as_array().map_or(0, Vec::len)
}

#[tokio::test]
async fn a_megabyte_of_problems_is_a_small_400_that_counts_what_it_left_out() {
    let stack = Stack::start().await;
    let api = stack.api(APP);

    let mut choices = valid();
    choices["request"]["choices"] = json!(vec![1; 495_000]);
    let mut unknown = valid();
    let object = unknown.as_object_mut().unwrap();
    for i in 0..80_000 {
        object.insert(format!("x{i:06}"), json!(1));
    }
    let mut long_key = valid();
    long_key["request"]["\"".repeat(450_000).as_str()] = json!(1);
    for (name, body, listed, more) in [
        ("choices", choices, 1, None),
        ("unknown fields", unknown, 50, Some(80_000 - 50)),
        ("long key", long_key, 1, None),
    ] {
        let size = body.to_string().len();
        assert!(size > 900_000 && size <= MAX_CREATE_BODY_BYTES, "{name}: a body of {size} bytes");
        let answer = post(&api, "/v1/tasks", &body).await;
        let error = &answer.body["error"];
        assert_eq!((answer.status, error["code"].as_str()), (400, Some("INVALID_REQUEST")), "{name}");
        assert_eq!(
            details(error),
            listed,
            "{name}: {}",
            answer.body.to_string().chars().take(300).collect::<String>()
        );
        assert_eq!(error["moreProblems"].as_u64(), more, "{name}");
        assert!(lambda_bytes(&answer) < 20_000, "{name}: a 400 of {} bytes", lambda_bytes(&answer));
    }
    assert_eq!(stack.db.count("SELECT count(*) FROM tasks").await, 0);
}

#[tokio::test]
async fn a_six_megabyte_batch_of_bad_items_answers_well_under_a_megabyte() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    let item = |i: usize| {
        let mut item = valid();
        item["effectKey"] = json!(format!("bad/{i}"));
        let object = item.as_object_mut().unwrap();
        for j in 0..440 {
            object.insert(format!("y{j:03}"), json!(1));
        }
        object.insert("\\".repeat(900), json!(1));
        item
    };
    let batch = json!({"tasks": (0..1000).map(item).collect::<Vec<_>>()});
    let size = batch.to_string().len();
    assert!(size > 5_500_000 && size <= MAX_BULK_BODY_BYTES, "a batch of {size} bytes");
    let answer = post(&api, "/v1/tasks/batch", &batch).await;
    assert_eq!(answer.status, 200, "{}", answer.body.to_string().chars().take(300).collect::<String>());
    let results = answer.body["results"].as_array().unwrap();
    assert_eq!(results.len(), 1000);
    for result in results {
        assert_eq!(result["status"], 400);
        let error = &result["error"];
        let counted = details(error) + error["moreProblems"].as_u64().unwrap_or(0) as usize;
        assert_eq!(counted, 441, "every problem listed or counted: {error}");
    }
    assert!(details(&results[0]["error"]) == 50, "the first items list their first problems");
    let bytes = lambda_bytes(&answer);
    assert!(bytes < 1_000_000, "an answer of {bytes} bytes");
    println!("a {size}-byte batch of bad items: an answer of {bytes} bytes");
}

/// 100000 characters that grow when escaped: quotes and backslashes double, control
/// characters (never NUL) become `\u00XX` or a two-byte escape.
fn doubling_text(chars: usize) -> String {
    "\"\\\u{1}\t\"\\\n\"".chars().cycle().take(chars).collect()
}

fn long_item(run: &str, i: usize) -> Value {
    json!({"runId": run, "stepKey": "essay", "effectKey": format!("essay/{i:02}"), "modelId": "default",
           "request": {"kind": "generate_text", "prompt": doubling_text(20_000), "input": {"n": i},
                       "maxOutputChars": 100_000}})
}

#[tokio::test]
async fn pages_and_a_batch_sent_again_fit_lambdas_response_with_outputs_that_double() {
    let stack = Stack::start().await;
    let text = doubling_text(100_000);
    stack.stub.set_default(Reply::Answer(json!({"text": text})));
    let api = stack.api(APP);
    let (status, run) = api.post("/v1/runs", &json!({"scopeId": "essays"})).await;
    assert_eq!(status, 201);
    let run = run["id"].as_str().unwrap().to_owned();
    let items: Vec<Value> = (0..20).map(|i| long_item(&run, i)).collect();
    let first = post(&api, "/v1/tasks/batch", &json!({"tasks": items})).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let ids: Vec<String> = first.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["task"]["id"].as_str().unwrap().to_owned())
        .collect();
    for id in &ids {
        let task = api.wait_terminal(id).await;
        assert_eq!(task["status"], "succeeded", "{}", task["errorCode"]);
    }

    // The listing ends its pages early, counting the bytes Lambda carries, and loses nothing.
    let (mut seen, mut after, mut pages) = (Vec::new(), None::<String>, 0);
    loop {
        let mut path = format!("/v1/tasks?runId={run}");
        if let Some(after) = &after {
            path.push_str(&format!("&after={after}"));
        }
        let page = api.send(Method::GET, &path, None).await;
        assert_eq!(page.status, 200);
        let bytes = lambda_bytes(&page);
        assert!(bytes < LAMBDA_RESPONSE_LIMIT, "page {pages}: {bytes} bytes");
        let tasks = page.body["tasks"].as_array().unwrap();
        assert!(!tasks.is_empty());
        assert!(tasks.iter().all(|t| t["output"] == text), "a page carries whole outputs");
        seen.extend(tasks.iter().map(|t| t["id"].as_str().unwrap().to_owned()));
        pages += 1;
        match page.body["next"].as_str() {
            Some(next) => after = Some(next.to_owned()),
            None => break,
        }
    }
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(seen, sorted, "every task once, in order");
    assert!(pages >= 2, "twenty such tasks do not fit one page");

    // The finished batch sent again: outputs while they fit, then left out and said so.
    let items: Vec<Value> = (0..20).map(|i| long_item(&run, i)).collect();
    let again = post(&api, "/v1/tasks/batch", &json!({"tasks": items})).await;
    assert_eq!(again.status, 200);
    let bytes = lambda_bytes(&again);
    assert!(bytes < LAMBDA_RESPONSE_LIMIT, "a batch's answer of {bytes} bytes");
    let results = again.body["results"].as_array().unwrap();
    assert!(results.iter().all(|r| r["status"] == 200));
    let carried = results.iter().take_while(|r| r["task"]["output"] == text).count();
    assert!(carried >= 1, "outputs while they fit");
    for result in &results[carried..] {
        assert!(result["task"].get("output").is_none(), "{}", result["task"]["id"]);
        assert_eq!(result["task"]["omitted"], json!(["output"]), "what was left out is said");
        assert_eq!(result["task"]["status"], "succeeded");
    }
    assert!(carried < results.len(), "twenty outputs do not fit: {carried} carried");
    println!("{pages} pages; a batch's answer of {bytes} bytes carrying {carried} outputs");
}

/// Keys are echoed in a batch's answer, and a control character in a key takes 7 bytes there
/// (`\\u0001`): 650 items with the longest such keys would answer about 7 MB. The items after
/// the answer's room leave their keys out too, and say so.
#[tokio::test]
async fn a_batch_whose_keys_grow_when_escaped_still_fits() {
    let stack = Stack::start().await;
    stack.stub.set_default(Reply::slow(Duration::from_secs(60)));
    let api = stack.api(APP);
    let item = |i: usize| {
        let mut item = valid();
        item["stepKey"] = json!("\u{1}".repeat(1000));
        item["effectKey"] = json!(format!("{i:03}{}", "\u{1}".repeat(497)));
        item
    };
    let batch = json!({"tasks": (0..650).map(item).collect::<Vec<_>>()});
    let size = batch.to_string().len();
    assert!(size <= MAX_BULK_BODY_BYTES, "a batch of {size} bytes");
    let answer = post(&api, "/v1/tasks/batch", &batch).await;
    assert_eq!(answer.status, 200);
    let bytes = lambda_bytes(&answer);
    assert!(bytes < LAMBDA_RESPONSE_LIMIT, "an answer of {bytes} bytes");
    let results = answer.body["results"].as_array().unwrap();
    assert!(results.iter().all(|r| r["status"] == 201 && r["task"]["id"].is_string()));
    let whole = results.iter().take_while(|r| r["task"]["stepKey"].is_string()).count();
    assert!(whole >= 1 && whole < results.len(), "{whole} of {} answered whole", results.len());
    for result in &results[whole..] {
        assert!(result["task"].get("stepKey").is_none() && result["task"].get("effectKey").is_none());
        assert_eq!(result["task"]["omitted"], json!(["stepKey", "effectKey"]));
    }
    assert_eq!(stack.db.count(&format!("SELECT count(*) FROM tasks WHERE app_id = '{APP}'")).await, 650);
    println!("a {size}-byte batch: an answer of {bytes} bytes, {whole} items with their keys");
}
