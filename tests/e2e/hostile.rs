//! Hostile input at the edge: a table of requests that try to break parsing, limits, routing and
//! the database (invalid JSON and UTF-8, NUL bytes, 10 MB bodies, 10000-deep nesting, numbers
//! beyond i64 and f64, bad budgets, both or neither owner, SQL fragments and unicode in keys and
//! ids, ids that are not UUIDs, wrong methods). Each gets its documented 4xx and error code,
//! nothing is stored, no answer carries a secret, and the server keeps serving.

use aitasks_testkit::*;
use reqwest::Method;
use serde_json::{json, Value};

const APP: &str = "app-hostile";

fn valid() -> Value {
    json!({
        "owner": {"scopeId": "s1"}, "stepKey": "step", "effectKey": "key", "modelId": "default",
        "request": {"kind": "classify", "prompt": "Sentiment?", "input": "great", "choices": ["pos", "neg"]},
    })
}

/// `valid()` with one JSON pointer replaced (or removed when `value` is `None`).
fn with(pointer: &str, value: Option<Value>) -> Vec<u8> {
    let mut body = valid();
    let (parent, key) = pointer.rsplit_once('/').expect("pointer");
    let target = body.pointer_mut(parent).expect("parent exists");
    match value {
        Some(value) => target[key] = value,
        None => {
            target.as_object_mut().expect("object").remove(key);
        }
    }
    body.to_string().into_bytes()
}

fn budget(field: &str, value: Value) -> Vec<u8> {
    let mut body = valid();
    body["scope"] = json!({"sourceId": "doc", "sourceRevision": "r1", "budget": {
        "burst": 5, "tasksPerMinute": 60, "maxStepsPerSource": 10, "sourcesPer24Hours": 10,
        "scopeConcurrent": 4, "globalConcurrent": 10}});
    body["scope"]["budget"][field] = value;
    body.to_string().into_bytes()
}

/// A valid body whose request input is nested `depth` arrays deep.
fn nested(depth: usize) -> Vec<u8> {
    let mut body = valid().to_string();
    let input = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    body = body.replace("\"great\"", &input);
    body.into_bytes()
}

fn raw(text: &str) -> Vec<u8> {
    text.as_bytes().to_vec()
}

const SQL: &str = "'; DROP TABLE tasks; --";
const UNICODE: &str = "ünïcødé 🚀 \u{202e}rtl";

struct Case {
    name: &'static str,
    method: Method,
    path: String,
    body: Option<Vec<u8>>,
    status: u16,
    code: &'static str,
}

fn case(
    name: &'static str,
    method: Method,
    path: &str,
    body: Option<Vec<u8>>,
    status: u16,
    code: &'static str,
) -> Case {
    Case { name, method, path: path.to_owned(), body, status, code }
}

fn create(name: &'static str, body: Vec<u8>, status: u16, code: &'static str) -> Case {
    case(name, Method::POST, "/v1/tasks", Some(body), status, code)
}

fn cases(run_id: &str) -> Vec<Case> {
    const BAD: &str = "INVALID_REQUEST";
    const MISSING: &str = "NOT_FOUND";
    const WRONG_METHOD: &str = "METHOD_NOT_ALLOWED";
    let id = uuid::Uuid::new_v4();
    let mut on_run = valid();
    on_run.as_object_mut().expect("object").remove("owner");
    on_run["runId"] = json!(run_id);
    let both = {
        let mut body = valid();
        body["runId"] = json!(run_id);
        body.to_string().into_bytes()
    };
    let mut huge_valid = valid();
    huge_valid["request"]["input"] = json!("x".repeat(10 * 1024 * 1024 - 400));
    let mut huge_invalid = vec![b'['; 10 * 1024 * 1024 - 64];
    huge_invalid.extend_from_slice(b"oops");
    vec![
        // Not JSON, or not UTF-8.
        create("empty body", Vec::new(), 400, BAD),
        create("truncated JSON", raw("{\"stepKey\": "), 400, BAD),
        create("trailing garbage", [valid().to_string().as_bytes(), b"}}"].concat(), 400, BAD),
        create("invalid UTF-8", b"{\"stepKey\": \"\xff\xfe\"}".to_vec(), 400, BAD),
        create(
            "invalid UTF-8 in the input",
            valid()
                .to_string()
                .replace("great", "gr\u{1}")
                .into_bytes()
                .iter()
                .map(|b| if *b == 1 { 0xC3 } else { *b })
                .collect(),
            400,
            BAD,
        ),
        create("NUL byte outside strings", raw("{\"stepKey\":\0\"s\"}"), 400, BAD),
        create(
            "byte order mark",
            [b"\xEF\xBB\xBF".as_slice(), valid().to_string().as_bytes()].concat(),
            400,
            BAD,
        ),
        create("top-level array", raw("[1, 2]"), 400, BAD),
        create("top-level string", raw("\"task\""), 400, BAD),
        create("top-level null", raw("null"), 400, BAD),
        create("a number beyond f64", raw("1e999"), 400, BAD),
        // Size and depth.
        create("10 MB valid body", huge_valid.to_string().into_bytes(), 413, "AI_TASK_INPUT_TOO_LARGE"),
        create("10 MB invalid body", huge_invalid, 413, "AI_TASK_INPUT_TOO_LARGE"),
        create("10000-deep arrays", nested(10_000), 400, BAD),
        create(
            "10000-deep objects",
            raw(&format!("{}1{}", "{\"a\":".repeat(10_000), "}".repeat(10_000))),
            400,
            BAD,
        ),
        create("200-deep arrays", nested(200), 400, BAD),
        // Numbers.
        create(
            "maxOutputChars beyond i64",
            with("/request/maxOutputChars", Some(json!(9_223_372_036_854_775_808u64))),
            400,
            BAD,
        ),
        create(
            "maxOutputChars 1e30",
            raw(&valid()
                .to_string()
                .replace("\"kind\":\"classify\"", "\"kind\":\"generate_text\",\"maxOutputChars\":1e30")
                .replace(",\"choices\":[\"pos\",\"neg\"]", "")),
            400,
            BAD,
        ),
        create(
            "maxOutputChars negative",
            raw(&valid()
                .to_string()
                .replace("\"kind\":\"classify\"", "\"kind\":\"generate_text\",\"maxOutputChars\":-5")
                .replace(",\"choices\":[\"pos\",\"neg\"]", "")),
            400,
            BAD,
        ),
        create(
            "maxOutputChars fractional",
            raw(&valid()
                .to_string()
                .replace("\"kind\":\"classify\"", "\"kind\":\"generate_text\",\"maxOutputChars\":1.5")
                .replace(",\"choices\":[\"pos\",\"neg\"]", "")),
            400,
            BAD,
        ),
        create("burst negative", budget("burst", json!(-1)), 400, BAD),
        create("burst zero", budget("burst", json!(0)), 400, BAD),
        create("burst fractional", budget("burst", json!(2.5)), 400, BAD),
        create("burst beyond i64", budget("burst", json!(18_446_744_073_709_551_615u64)), 400, BAD),
        create("burst beyond 2^53", budget("burst", json!(9_007_199_254_740_993u64)), 400, BAD),
        create("burst as a string", budget("burst", json!("5")), 400, BAD),
        create("tasksPerMinute negative", budget("tasksPerMinute", json!(-60)), 400, BAD),
        create("scopeConcurrent fractional", budget("scopeConcurrent", json!(0.5)), 400, BAD),
        create("globalConcurrent null", budget("globalConcurrent", Value::Null), 400, BAD),
        create("sourcesPer24Hours huge float", budget("sourcesPer24Hours", json!(1e300)), 400, BAD),
        create("budget field unknown", budget("surprise", json!(1)), 400, BAD),
        // Owners.
        create("both runId and owner", both, 400, BAD),
        create("neither runId nor owner", with("/owner", None), 400, BAD),
        create("runId not a UUID", raw(&on_run.to_string().replace(run_id, "not-a-uuid")), 400, BAD),
        create("runId SQL", raw(&on_run.to_string().replace(run_id, SQL)), 400, BAD),
        create("runId of nobody", raw(&on_run.to_string().replace(run_id, &id.to_string())), 404, MISSING),
        create("owner not an object", with("/owner", Some(json!("s1"))), 400, BAD),
        create("scopeId NUL", with("/owner/scopeId", Some(json!("a\u{0}b"))), 400, BAD),
        create("scopeId empty", with("/owner/scopeId", Some(json!(""))), 400, BAD),
        create("usageSubject wrong shape", with("/owner/usageSubject", Some(json!(["user"]))), 400, BAD),
        create(
            "usageSubject SQL key",
            with("/owner/usageSubject", Some(json!({"type": "user", "id": "u", SQL: 1}))),
            400,
            BAD,
        ),
        // Keys and identifiers.
        create("stepKey NUL", with("/stepKey", Some(json!("a\u{0}"))), 400, BAD),
        create("stepKey empty", with("/stepKey", Some(json!(""))), 400, BAD),
        create("stepKey 10000 characters", with("/stepKey", Some(json!("s".repeat(10_000)))), 400, BAD),
        create("effectKey NUL", with("/effectKey", Some(json!("\u{0}"))), 400, BAD),
        create(
            "effectKey 10000 unicode characters",
            with("/effectKey", Some(json!("é".repeat(10_000)))),
            400,
            BAD,
        ),
        create("effectKey a number", with("/effectKey", Some(json!(42))), 400, BAD),
        create("SQL as a top-level key", with(&format!("/{SQL}"), Some(json!(1))), 400, BAD),
        create("unicode as a top-level key", with(&format!("/{UNICODE}"), Some(json!(1))), 400, BAD),
        create("SQL as a request key", with(&format!("/request/{SQL}"), Some(json!(1))), 400, BAD),
        create("unicode kind", with("/request/kind", Some(json!(UNICODE))), 400, BAD),
        create("SQL kind", with("/request/kind", Some(json!(SQL))), 400, BAD),
        create("modelId SQL", with("/modelId", Some(json!(SQL))), 400, "AI_MODEL_UNKNOWN"),
        create("modelId unicode", with("/modelId", Some(json!(UNICODE))), 400, "AI_MODEL_UNKNOWN"),
        create("modelId empty", with("/modelId", Some(json!(""))), 400, BAD),
        // The request itself.
        create("request null", with("/request", Some(Value::Null)), 400, BAD),
        create("request an array", with("/request", Some(json!([]))), 400, BAD),
        create("prompt missing", with("/request/prompt", None), 400, BAD),
        create("prompt NUL", with("/request/prompt", Some(json!("\u{0}"))), 400, BAD),
        create("choices empty", with("/request/choices", Some(json!([]))), 400, BAD),
        create("choices not strings", with("/request/choices", Some(json!([1, 2]))), 400, BAD),
        create("choices duplicated", with("/request/choices", Some(json!(["pos", "pos"]))), 400, BAD),
        create(
            "recompute a string",
            {
                let mut body = valid();
                body["scope"] =
                    json!({"sourceId": "doc", "sourceRevision": "r1", "recompute": "yes", "budget": {}});
                body.to_string().into_bytes()
            },
            400,
            BAD,
        ),
        // Paths, queries and methods.
        case("task id not a UUID", Method::GET, "/v1/tasks/not-a-uuid", None, 404, MISSING),
        case("task id SQL", Method::GET, "/v1/tasks/1'%20OR%20'1'='1", None, 404, MISSING),
        case("task id unicode", Method::GET, "/v1/tasks/%C3%BCn%C3%AFc%C3%B8d%C3%A9", None, 404, MISSING),
        case("task id NUL", Method::GET, "/v1/tasks/%00", None, 404, MISSING),
        case("task id of nobody", Method::GET, &format!("/v1/tasks/{id}"), None, 404, MISSING),
        case("run id not a UUID", Method::GET, "/v1/runs/12345", None, 404, MISSING),
        case("run id SQL", Method::GET, "/v1/runs/x';DELETE%20FROM%20runs;--", None, 404, MISSING),
        case("cancel a task of nobody", Method::POST, &format!("/v1/tasks/{id}/cancel"), None, 404, MISSING),
        case("cancel a run not a UUID", Method::POST, "/v1/runs/..%2F..%2Fetc/cancel", None, 404, MISSING),
        // The client resolves the dot segments: this is DELETE /v1/runs, a path that takes GET and POST.
        case("path traversal", Method::DELETE, "/v1/tasks/../runs", None, 405, WRONG_METHOD),
        case("effect key SQL", Method::GET, "/v1/tasks?effectKey=%27%20OR%201%3D1%20--", None, 404, MISSING),
        case("effect key unicode", Method::GET, "/v1/tasks?effectKey=%F0%9F%9A%80", None, 404, MISSING),
        case("effect key missing", Method::GET, "/v1/tasks", None, 400, BAD),
        case("runs limit SQL", Method::GET, "/v1/runs?limit=1%3BDROP%20TABLE%20runs", None, 400, BAD),
        case("runs time SQL", Method::GET, "/v1/runs?createdAfter=%27%20OR%201%3D1", None, 400, BAD),
        case("events of a task id SQL", Method::GET, "/v1/tasks/x';--/events", None, 404, MISSING),
        case("batch of a task of nobody", Method::GET, &format!("/v1/tasks/{id}/batch"), None, 404, MISSING),
        case("attempts of a task id SQL", Method::GET, "/v1/tasks/x';--/attempts", None, 404, MISSING),
        case(
            "attempts of a task of nobody",
            Method::GET,
            &format!("/v1/tasks/{id}/attempts"),
            None,
            404,
            MISSING,
        ),
        case("summary time SQL", Method::GET, "/v1/summary?createdAfter=%27%20OR%201%3D1", None, 400, BAD),
        case(
            "summary of a century",
            Method::GET,
            "/v1/summary?createdAfter=1900-01-01T00:00:00Z",
            None,
            400,
            BAD,
        ),
        case("listing kind SQL", Method::GET, "/v1/tasks?scopeId=s&kind=%27%20OR%201%3D1", None, 400, BAD),
        case("listing model NUL", Method::GET, "/v1/tasks?scopeId=s&modelId=%00", None, 400, BAD),
        case("effect key NUL", Method::GET, "/v1/tasks?effectKey=%00", None, 400, BAD),
        case("wait NaN", Method::GET, &format!("/v1/tasks/{id}?wait=NaN"), None, 400, BAD),
        case("wait not a number", Method::GET, &format!("/v1/tasks/{id}?wait=soon"), None, 400, BAD),
        case("wait beyond f64", Method::GET, &format!("/v1/tasks/{id}?wait=1e999"), None, 400, BAD),
        case(
            "PUT on tasks",
            Method::PUT,
            "/v1/tasks",
            Some(valid().to_string().into_bytes()),
            405,
            WRONG_METHOD,
        ),
        case("DELETE on tasks", Method::DELETE, "/v1/tasks", None, 405, WRONG_METHOD),
        case("PATCH on runs", Method::PATCH, "/v1/runs", Some(raw("{}")), 405, WRONG_METHOD),
        case("GET on cancel", Method::GET, &format!("/v1/tasks/{id}/cancel"), None, 405, WRONG_METHOD),
        case("unknown route", Method::GET, "/v1/admin", None, 404, MISSING),
        case("run scopeId a number", Method::POST, "/v1/runs", Some(raw("{\"scopeId\": 5}")), 400, BAD),
        case("run invalid JSON", Method::POST, "/v1/runs", Some(raw("{scopeId}")), 400, BAD),
        case("run scopeId NUL", Method::POST, "/v1/runs", Some(raw("{\"scopeId\": \"\\u0000\"}")), 400, BAD),
        case(
            "run SQL key",
            Method::POST,
            "/v1/runs",
            Some(serde_json::to_vec(&json!({"scopeId": "s", SQL: 1})).unwrap()),
            400,
            BAD,
        ),
        case("release invalid JSON", Method::POST, "/v1/tasks/release", Some(raw("[")), 400, BAD),
        case(
            "release without effectKey",
            Method::POST,
            "/v1/tasks/release",
            Some(raw("{\"scopeId\": \"s1\"}")),
            400,
            BAD,
        ),
        case(
            "release NUL scope",
            Method::POST,
            "/v1/tasks/release",
            Some(raw("{\"scopeId\": \"\\u0000\", \"effectKey\": \"k\"}")),
            400,
            BAD,
        ),
        case(
            "unreleased cursor half",
            Method::GET,
            "/v1/unreleased-sources?afterSource=%FF%FE",
            None,
            400,
            BAD,
        ),
        case("unreleased cursor NUL", Method::GET, "/v1/unreleased-sources?afterScope=%00", None, 400, BAD),
        case("unreleased step key NUL", Method::GET, "/v1/unreleased-sources?task=%00", None, 400, BAD),
        case("wrong method on scopes", Method::POST, "/v1/scopes/s1/tasks", None, 405, WRONG_METHOD),
    ]
}

#[tokio::test]
async fn hostile_requests_get_their_4xx_store_nothing_and_the_server_keeps_serving() {
    let stack = Stack::start().await;
    let api = stack.api(APP);
    let (status, run) = api.post("/v1/runs", &json!({"scopeId": "s1"})).await;
    assert_eq!(status, 201);
    let run_id = run["id"].as_str().expect("run id").to_owned();

    let cases = cases(&run_id);
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let mut wrong = Vec::new();
    for case in &cases {
        let answer = api.send(case.method.clone(), &case.path, case.body.clone()).await;
        let code = answer.body["error"]["code"].as_str().unwrap_or("(no code)").to_owned();
        if (answer.status, code.as_str()) != (case.status, case.code) {
            wrong.push(format!(
                "{}: expected {} {}, got {} {} {}",
                case.name,
                case.status,
                case.code,
                answer.status,
                code,
                answer.body.to_string().chars().take(200).collect::<String>()
            ));
        }
        let text = answer.body.to_string();
        assert!(!text.contains(STUB_API_KEY), "{}: the API key in an answer", case.name);
        assert!(
            !text.contains("DROP TABLE") || answer.status == 400,
            "{}: echoes SQL outside a 400",
            case.name
        );
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases answered wrongly:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
    println!("{} hostile requests, each answered with its 4xx", cases.len());

    assert_eq!(stack.db.count("SELECT count(*) FROM tasks").await, 0, "nothing was stored");
    assert_eq!(stack.db.count("SELECT count(*) FROM runs").await, 1, "only the test's own run");
    assert_eq!(stack.db.count("SELECT count(*) FROM scope_admissions").await, 0, "no admission spent");
    let (status, task) = api.post("/v1/tasks", &valid()).await;
    assert_eq!(status, 201, "and the server still serves: {task}");
}
