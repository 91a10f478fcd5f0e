//! `POST /v1/runs` with an `Idempotency-Key` (docs/api.md, "Runs"): the key names one run of the
//! tenant. Sent again with the same body, it answers that run (200) and stores nothing; with
//! another body, 422 `IDEMPOTENCY_KEY_REUSED`; a malformed key is a 400 naming the header. Many
//! requests with one key at once make one run. Without a key, every create is a new run.

use aitasks_testkit::*;
use serde_json::{json, Value};

const APP: &str = "app-run-keys";

struct Runs {
    url: String,
    http: reqwest::Client,
}

impl Runs {
    fn of(stack: &Stack) -> Runs {
        Runs { url: format!("http://{}/v1/runs", stack.server.address), http: reqwest::Client::new() }
    }

    async fn create_as(&self, app: &str, key: Option<&str>, body: &Value) -> (u16, Value) {
        let mut request = self.http.post(&self.url).bearer_auth(dev_token(app)).json(body);
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn create(&self, key: Option<&str>, body: &Value) -> (u16, Value) {
        self.create_as(APP, key, body).await
    }
}

#[tokio::test]
async fn a_key_names_one_run_of_its_tenant() {
    let stack = Stack::start_with(&[("AITASK_LOCAL_POLLERS", "0")]).await;
    let runs = Runs::of(&stack);
    let body = json!({"scopeId": "inbox", "actor": {"userId": "u1"}});
    let key = "7d0c1c9e-5b7e-4a8e-9f43-0f6f1b1e2a10";

    let (status, first) = runs.create(Some(key), &body).await;
    assert_eq!(status, 201, "{first}");
    let (status, again) = runs.create(Some(key), &body).await;
    assert_eq!((status, &again["id"]), (200, &first["id"]), "the same run: {again}");
    // The actor's fields in another order are the same body.
    let (status, _) = runs.create(Some(key), &json!({"actor": {"userId": "u1"}, "scopeId": "inbox"})).await;
    assert_eq!(status, 200);

    for other in [
        json!({"scopeId": "elsewhere", "actor": {"userId": "u1"}}),
        json!({"scopeId": "inbox", "actor": {"userId": "u2"}}),
        json!({"scopeId": "inbox"}),
    ] {
        let (status, answer) = runs.create(Some(key), &other).await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (422, Some("IDEMPOTENCY_KEY_REUSED")),
            "{other}: {answer}"
        );
    }
    // Another tenant's key of the same text is its own.
    let (status, theirs) = runs.create_as("app-run-keys-other", Some(key), &body).await;
    assert_eq!(status, 201);
    assert_ne!(theirs["id"], first["id"]);
    // A canceled run is answered as it is.
    let cancel = format!("{}/{}/cancel", runs.url, first["id"].as_str().unwrap());
    let canceled = runs.http.post(&cancel).bearer_auth(dev_token(APP)).send().await.unwrap();
    assert_eq!(canceled.status().as_u16(), 200);
    let (status, again) = runs.create(Some(key), &body).await;
    assert_eq!((status, again["state"].as_str()), (200, Some("canceled")), "{again}");
    // Without a key, each create is a run of its own.
    let (a, _) = runs.create(None, &body).await;
    let (b, _) = runs.create(None, &body).await;
    assert_eq!((a, b), (201, 201));
    assert_eq!(stack.db.count(&format!("SELECT count(*) FROM runs WHERE app_id = '{APP}'")).await, 3);
}

#[tokio::test]
async fn a_malformed_key_is_refused_naming_the_header() {
    let stack = Stack::start_with(&[("AITASK_LOCAL_POLLERS", "0")]).await;
    let runs = Runs::of(&stack);
    let long = "k".repeat(256);
    for key in ["", " ", "two words", "tab\there", long.as_str()] {
        let (status, answer) = runs.create(Some(key), &json!({"scopeId": "s"})).await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (400, Some("INVALID_REQUEST")),
            "{key:?}: {answer}"
        );
        assert_eq!(answer["error"]["details"][0]["path"], "Idempotency-Key", "{answer}");
    }
    let (status, _) = runs.create(Some(&"k".repeat(255)), &json!({"scopeId": "s"})).await;
    assert_eq!(status, 201, "255 characters is the limit");
    assert_eq!(stack.db.count("SELECT count(*) FROM runs").await, 1);
}

#[tokio::test]
async fn creates_with_one_key_at_once_make_one_run() {
    let stack = Stack::start_with(&[("AITASK_LOCAL_POLLERS", "0")]).await;
    let runs = Runs::of(&stack);
    let body = json!({"scopeId": "race"});
    let answers = futures::future::join_all((0..20).map(|_| runs.create(Some("one-key"), &body))).await;
    let created = answers.iter().filter(|(status, _)| *status == 201).count();
    assert_eq!(created, 1, "{answers:?}");
    assert!(
        answers.iter().all(|(status, run)| *status < 300 && run["id"] == answers[0].1["id"]),
        "{answers:?}"
    );
    assert_eq!(stack.db.count("SELECT count(*) FROM runs").await, 1);
}
