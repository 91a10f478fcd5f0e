//! A client of an API on this machine's loopback never sends through a proxy: `HTTP_PROXY`
//! would carry the token off the machine, in clear text over plain HTTP. Its own test binary:
//! the proxy variables are the process's, and no other test should see them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[path = "../client/stub.rs"]
#[allow(dead_code)]
mod stub;

use stub::{task_json, Answer, Stub, TASK_ID};

#[tokio::test]
async fn a_loopback_api_is_reached_directly_whatever_the_proxy_variables_say() {
    // A "proxy" that counts the connections made to it and closes them.
    let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    let reached = Arc::new(AtomicUsize::new(0));
    let counted = reached.clone();
    tokio::spawn(async move {
        while let Ok((connection, _)) = proxy.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(connection);
        }
    });
    for name in ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"] {
        std::env::set_var(name, &proxy_url);
    }
    for name in ["NO_PROXY", "no_proxy"] {
        std::env::remove_var(name);
    }

    let api = Stub::script(vec![Answer::json(200, task_json(TASK_ID, "succeeded"))]).await;
    let task = api.client(1).get(TASK_ID.parse().unwrap()).await.expect("the loopback API answered");
    assert_eq!(task.id.to_string(), TASK_ID);
    assert_eq!(api.hits().len(), 1, "the API itself was asked");
    assert_eq!(reached.load(Ordering::SeqCst), 0, "nothing went to the proxy");
}
