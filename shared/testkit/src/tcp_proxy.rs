//! A TCP forwarder on loopback that a test can cut: a database outage for one stack, while the
//! shared cluster and every other test's connections carry on. It can also drop one connection
//! at the moment the server answers a given statement ([`TcpProxy::cut_reply_containing`]): the
//! server has done the work (an autocommitted insert is committed before its answer is sent),
//! and the client never hears of it; that needs a connection without TLS
//! (`Stack::start_through_in_plaintext`).
//!
//! Home-made, not Toxiproxy (docs/development.md, "Home-made parts and why"): Toxiproxy installs
//! from none of the registries this project uses, its crates.io port (`noxious`, 2021) publishes
//! no server and brings second copies of crates deny.toml refuses, and no toxic of either cuts a
//! connection on what the server answers (`limit_data` counts bytes).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// What the forwarder shares with its connections.
#[derive(Default)]
struct Faults {
    cut: AtomicBool,
    /// The bytes whose arrival from the server ends the connection (once), if armed.
    reply_marker: Mutex<Option<Vec<u8>>>,
    replies_cut: AtomicUsize,
}

impl Faults {
    /// Whether `bytes` (what the server just sent, after the `tail` of what it sent before)
    /// holds the armed marker; disarms it when it does.
    fn take_marker(&self, tail: &[u8], bytes: &[u8]) -> bool {
        let mut armed = self.reply_marker.lock().unwrap_or_else(|p| p.into_inner());
        let Some(marker) = armed.as_ref() else { return false };
        let mut seen = tail.to_vec();
        seen.extend_from_slice(bytes);
        if seen.windows(marker.len()).any(|w| w == marker.as_slice()) {
            *armed = None;
            self.replies_cut.fetch_add(1, Ordering::SeqCst);
            return true;
        }
        false
    }
}

pub struct TcpProxy {
    /// `127.0.0.1:port`: where to connect instead of the target.
    pub address: String,
    faults: Arc<Faults>,
    cut_now: watch::Sender<u64>,
}

impl TcpProxy {
    /// Forward a free loopback port to `target` (`host:port`).
    pub async fn start(target: &str) -> TcpProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the proxy");
        let address = listener.local_addr().expect("proxy address").to_string();
        let faults = Arc::new(Faults::default());
        let (cut_now, cuts) = watch::channel(0u64);
        let (target, shared) = (target.to_owned(), faults.clone());
        tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                if shared.cut.load(Ordering::SeqCst) {
                    // Accepted and dropped at once: the client sees its connection closed.
                    continue;
                }
                let (target, mut cuts, faults) = (target.clone(), cuts.clone(), shared.clone());
                // Only a cut after this connection began ends it.
                cuts.mark_unchanged();
                tokio::spawn(async move {
                    let Ok(outbound) = TcpStream::connect(&target).await else { return };
                    tokio::select! {
                        _ = forward(inbound, outbound, faults) => {}
                        _ = cuts.changed() => {}
                    }
                });
            }
        });
        TcpProxy { address, faults, cut_now }
    }

    /// Close every forwarded connection and refuse new ones until [`TcpProxy::restore`].
    pub fn cut(&self) {
        self.faults.cut.store(true, Ordering::SeqCst);
        self.cut_now.send_modify(|n| *n += 1);
    }

    pub fn restore(&self) {
        self.faults.cut.store(false, Ordering::SeqCst);
    }

    /// Once: the first time the server sends bytes holding `marker` (a value the statement
    /// returns), close that connection instead of passing them on. The client sees its
    /// connection closed after the server has done the work.
    pub fn cut_reply_containing(&self, marker: &str) {
        *self.faults.reply_marker.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(marker.as_bytes().to_vec());
    }

    /// How many replies [`TcpProxy::cut_reply_containing`] has cut.
    pub fn replies_cut(&self) -> usize {
        self.faults.replies_cut.load(Ordering::SeqCst)
    }
}

/// Both directions until either side closes; the server's side watched for the armed marker.
async fn forward(inbound: TcpStream, outbound: TcpStream, faults: Arc<Faults>) {
    let (mut client_read, mut client_write) = inbound.into_split();
    let (mut server_read, mut server_write) = outbound.into_split();
    let upstream = tokio::io::copy(&mut client_read, &mut server_write);
    let downstream = async {
        let mut buffer = vec![0u8; 64 * 1024];
        // The end of what came before, so a marker split across two reads is still seen.
        let mut tail: Vec<u8> = Vec::new();
        loop {
            let n = match server_read.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if faults.take_marker(&tail, &buffer[..n]) {
                return;
            }
            if client_write.write_all(&buffer[..n]).await.is_err() {
                return;
            }
            tail.extend_from_slice(&buffer[..n]);
            let keep = tail.len().saturating_sub(256);
            tail.drain(..keep);
        }
    };
    tokio::select! {
        _ = upstream => {}
        _ = downstream => {}
    }
}

/// `url` with its `host:port` replaced by `address`; and the `host:port` it had.
pub fn via(url: &str, address: &str) -> (String, String) {
    let (scheme_and_credentials, rest) = url.split_once('@').expect("a URL with credentials");
    let (server, path) = rest.split_once('/').expect("a URL with a database");
    (format!("{scheme_and_credentials}@{address}/{path}"), server.to_owned())
}
