//! The API never redirects: a 3xx is an error, never followed, never retried, so the token (and
//! the body) is never sent to the address a redirect names.

use aitasks_client::TaskBody;
use serde_json::json;

use crate::stub::{task_json, Answer, Stub, TASK_ID};

#[tokio::test]
async fn a_redirect_is_an_error_and_nothing_goes_where_it_points() {
    let elsewhere = Stub::script(vec![Answer::json(201, task_json(TASK_ID, "queued"))]).await;
    for status in [301, 302, 303, 307, 308] {
        let location = format!("{}/v1/tasks", elsewhere.url);
        let api = Stub::script(vec![Answer::json(status, json!({})).header("location", &location)]).await;
        let client = api.client(5);

        let error = client.get(TASK_ID.parse().unwrap()).await.unwrap_err();
        assert_eq!(error.status(), Some(status), "{error}");
        assert!(error.to_string().contains("redirect"), "{error}");
        assert!(error.to_string().contains(&location), "it says where it pointed: {error}");
        let body = TaskBody::unchecked(json!({"effectKey": "k1"}));
        let error = client.create(&body).await.unwrap_err();
        assert_eq!(error.status(), Some(status), "{error}");
        let error = client.create_run("s", None).await.unwrap_err();
        assert_eq!(error.status(), Some(status), "{error}");
        assert_eq!(api.hits().len(), 3, "{status}: one try each, no retry");
    }
    let followed = elsewhere.hits();
    assert!(
        followed.is_empty(),
        "the redirect was followed, the token with it: {:?}",
        followed.iter().map(|h| (&h.method, &h.target, &h.authorization)).collect::<Vec<_>>()
    );
}
