//! DNS rebinding: a page on another site whose name is made to resolve to 127.0.0.1 reaches the
//! dev server from the user's own browser, as the same origin. Its requests carry that site's
//! name in `Host`, so the dev server answers only loopback names (`localhost`, `127.x.y.z`,
//! `[::1]`, any port) and the names `AITASK_LOCAL_HOSTS` adds; anything else is a 421
//! `HOST_NOT_ALLOWED`, before the token is looked at and before anything is stored.

use std::time::Duration;

use aitasks_testkit::{dev_token, token_with, Stack};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const APP: &str = "app-dev-hosts";

/// Send one HTTP/1.1 request with exactly this `Host` line (none when `None`); the status and body.
async fn send(address: &str, host: Option<&str>, method: &str, path: &str, body: &str) -> (u16, Value) {
    send_as(&dev_token(APP), address, host, method, path, body).await
}

async fn send_as(
    token: &str,
    address: &str,
    host: Option<&str>,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, Value) {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let host_line = host.map(|h| format!("Host: {h}\r\n")).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\n{host_line}Authorization: Bearer {token}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await.unwrap().unwrap();
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or_default();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

#[tokio::test]
async fn only_loopback_host_names_are_answered() {
    let stack = Stack::start_with(&[("AITASK_LOCAL_POLLERS", "0")]).await;
    let address = stack.server.address.clone();
    let port = address.rsplit(':').next().unwrap().to_owned();
    let run = r#"{"scopeId": "rebound"}"#;

    for host in [
        format!("attacker.example:{port}"),
        "attacker.example".to_owned(),
        format!("localhost.attacker.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
        format!("192.168.1.10:{port}"),
    ] {
        let (status, body) = send(&address, Some(&host), "POST", "/v1/runs", run).await;
        println!("Host: {host} -> {status} {body}");
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (421, Some("HOST_NOT_ALLOWED")),
            "{host}: {body}"
        );
        let (status, _) = send(&address, Some(&host), "GET", "/console", "").await;
        assert_eq!(status, 421, "{host}: the console too");
    }
    let (status, body) = send(&address, None, "POST", "/v1/runs", run).await;
    assert_eq!((status, body["error"]["code"].as_str()), (421, Some("HOST_NOT_ALLOWED")), "no Host: {body}");
    assert_eq!(stack.db.count("SELECT count(*) FROM runs").await, 0, "a refused request stores nothing");

    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LocalHost:{port}"),
        "localhost".to_owned(),
        format!("127.8.9.10:{port}"),
        format!("[::1]:{port}"),
    ] {
        let (status, body) = send(&address, Some(&host), "POST", "/v1/runs", run).await;
        assert_eq!(status, 201, "{host}: {body}");
    }
}

/// A dev server reached by other names (it listens beyond loopback, so with a secret of its own:
/// exposure.rs) answers the names `AITASK_LOCAL_HOSTS` lists, and still no others.
#[tokio::test]
async fn the_names_aitask_local_hosts_lists_are_answered_too() {
    const SECRET: &str = "a-secret-of-the-hosts-test-0123456789";
    let stack = Stack::start_with(&[
        ("AITASK_LOCAL_POLLERS", "0"),
        ("AITASK_DEV_JWT_SECRET", SECRET),
        ("AITASK_LOCAL_HOSTS", "devbox.test, 10.1.2.3"),
    ])
    .await;
    let token = token_with(SECRET, json!({"app_id": APP, "sub": "tester", "expIn": 3600}));
    let address = stack.server.address.clone();
    let run = r#"{"scopeId": "listed"}"#;
    for host in ["devbox.test:9000", "DEVBOX.test", "10.1.2.3:9000", "127.0.0.1"] {
        let (status, body) = send_as(&token, &address, Some(host), "POST", "/v1/runs", run).await;
        assert_eq!(status, 201, "{host}: {body}");
    }
    let (status, _) = send_as(&token, &address, Some("other.test"), "POST", "/v1/runs", run).await;
    assert_eq!(status, 421);
}
