//! A panic while a custom-resource request is handled still answers CloudFormation `FAILED`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpListener;

use migrate::{arm_panic_answer, install_panic_answer, CustomResourceRequest};
use serde_json::{json, Value};

/// A one-shot HTTP server standing in for the pre-signed S3 URL; returns the body it was sent.
fn response_url() -> (String, std::thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/cfn-response?X-Amz-Signature=test", listener.local_addr().expect("address"));
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("accept");
        let mut request = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let n = stream.read(&mut chunk).expect("read");
            request.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&request).to_string();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length: usize = head
                    .lines()
                    .find_map(|l| {
                        l.to_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned())
                    })
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                if body.len() >= length {
                    stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").expect("answer");
                    assert!(head.starts_with("PUT "), "CloudFormation answers are PUT: {head}");
                    return body.to_owned();
                }
            }
            if n == 0 {
                return String::new();
            }
        }
    });
    (url, server)
}

#[test]
fn a_panic_answers_failed_with_its_message() {
    let (url, server) = response_url();
    install_panic_answer();
    let request = CustomResourceRequest::parse(&json!({
        "RequestType": "Create", "ResponseURL": url, "StackId": "arn:aws:cloudformation:us-east-1:1:stack/s/1",
        "RequestId": "req-1", "LogicalResourceId": "Migrations"
    }))
    .expect("a custom-resource request");
    let armed = arm_panic_answer(&request);
    let panicked = std::panic::catch_unwind(|| panic!("the schema is not what we expected"));
    drop(armed);
    assert!(panicked.is_err());
    let body: Value = serde_json::from_str(&server.join().expect("server")).expect("a JSON answer");
    assert_eq!(body["Status"], "FAILED");
    assert_eq!(body["RequestId"], "req-1");
    assert_eq!(body["PhysicalResourceId"], "aitasks-migrations");
    let reason = body["Reason"].as_str().expect("reason");
    assert!(reason.contains("panicked") && reason.contains("the schema is not what we expected"), "{reason}");
}
