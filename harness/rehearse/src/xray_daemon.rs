//! The X-Ray daemon's side of its UDP protocol, on a loopback port: what a function with active
//! tracing sends to `AWS_XRAY_DAEMON_ADDRESS`. Each datagram is a header line
//! (`{"format": "json", "version": 1}`) and one segment document; anything else is counted as
//! malformed, as the daemon would drop it.

use std::net::UdpSocket;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

#[derive(Default)]
struct Received {
    documents: Vec<Value>,
    malformed: usize,
}

pub struct XrayDaemon {
    pub address: String,
    received: Arc<Mutex<Received>>,
}

impl XrayDaemon {
    pub fn start() -> std::io::Result<XrayDaemon> {
        let socket = UdpSocket::bind("127.0.0.1:0")?;
        let address = socket.local_addr()?.to_string();
        socket.set_read_timeout(Some(Duration::from_millis(200)))?;
        let received: Arc<Mutex<Received>> = Arc::default();
        let sink = Arc::downgrade(&received);
        std::thread::spawn(move || {
            let mut buffer = vec![0u8; 65_536];
            // Ends once the daemon is dropped.
            while let Some(received) = sink.upgrade() {
                let Ok(n) = socket.recv(&mut buffer) else { continue };
                let mut received = received.lock().unwrap_or_else(|p| p.into_inner());
                match parse(&buffer[..n]) {
                    Some(document) => received.documents.push(document),
                    None => received.malformed += 1,
                }
            }
        });
        Ok(XrayDaemon { address, received })
    }

    /// The segment documents received so far, and how many datagrams were malformed.
    pub fn received(&self) -> (Vec<Value>, usize) {
        let received = self.received.lock().unwrap_or_else(|p| p.into_inner());
        (received.documents.clone(), received.malformed)
    }
}

fn parse(datagram: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(datagram).ok()?;
    let (header, body) = text.split_once('\n')?;
    let header: Value = serde_json::from_str(header).ok()?;
    if header != serde_json::json!({"format": "json", "version": 1}) {
        return None;
    }
    let document: Value = serde_json::from_str(body).ok()?;
    let ok = ["name", "id", "trace_id"].iter().all(|key| document[key].is_string())
        && document["start_time"].is_number()
        && document["end_time"].is_number();
    ok.then_some(document)
}
