//! Deleting a large scope works in bounded batches: each request deletes at most its share and
//! says whether more is left (`{"deleted": n, "more": true}`); repeating it finishes the job.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use aitasks_testkit::*;
use aws_lambda_events::apigw::ApiGatewayV2httpRequest;
use lambda_runtime::{Context, LambdaEvent};
use serde_json::{json, Value};

fn delete_request(path: &str) -> ApiGatewayV2httpRequest {
    let event = json!({
        "version": "2.0", "routeKey": "$default", "rawPath": path, "rawQueryString": "",
        "headers": {},
        "requestContext": {
            "http": {"method": "DELETE", "path": path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1", "userAgent": "t"},
            "authorizer": {"jwt": {"claims": {"app_id": APP}, "scopes": null}},
            "requestId": "r", "routeKey": "$default", "stage": "$default", "time": "", "timeEpoch": 0,
            "accountId": "1", "apiId": "a", "domainName": "d", "domainPrefix": "d"
        },
        "isBase64Encoded": false
    });
    serde_json::from_value(event).expect("an API Gateway v2 event")
}

#[tokio::test]
async fn a_large_scope_goes_a_batch_per_request() {
    let db = TestDb::new().await;
    let queues = TestQueues::create(5, 30).await;
    let stub = StubProvider::start().await;
    let app =
        test_app(&db, &queues, &stub, &[("AITASK_REQUEST_PAGE", "10"), ("AITASK_REQUEST_WORK_MS", "0")]);
    let client = db.client().await;
    for i in 0..35 {
        aitasks_store::create_task(&client, &new_task(APP, app_owner("big"), &format!("t{i}")))
            .await
            .unwrap();
    }

    let mut answers = Vec::new();
    loop {
        let response = release_delete::handle(
            &app,
            LambdaEvent::new(delete_request("/v1/scopes/big/tasks"), Context::default()),
        )
        .await
        .unwrap();
        assert_eq!(response.status_code, 200);
        let body: Value = match response.body {
            Some(aws_lambda_events::encodings::Body::Text(text)) => serde_json::from_str(&text).unwrap(),
            other => panic!("{other:?}"),
        };
        let more = body["more"].as_bool().expect("more is always there");
        answers.push((body["deleted"].as_u64().unwrap(), more));
        if !more {
            break;
        }
        assert!(answers.len() < 10, "{answers:?}");
    }
    assert_eq!(answers, [(10, true), (10, true), (10, true), (5, false)]);
    assert_eq!(db.count("SELECT count(*) FROM tasks").await, 0);
}
