//! Where the URL and the token come from: flags, then the environment, then the config file.

use aitasks_testkit::{dev_token, Stack};

use crate::{aitasks_with, scratch};

const APP: &str = "app-cli-settings";

#[tokio::test]
async fn flags_win_over_the_environment_which_wins_over_the_config_file() {
    let stack = Stack::start().await;
    let url = format!("http://{}", stack.server.address);
    let token = dev_token(APP);
    let dir = scratch("config");
    let good = dir.join("good.toml");
    std::fs::write(&good, format!("url = \"{url}\"\ntoken = \"{token}\"\n")).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "url = \"http://127.0.0.1:1\"\ntoken = \"not-a-token\"\n").unwrap();
    let list = ["list", "--scope", "s", "--json", "--tries", "1"];

    // The file alone; a token others can read is warned about.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&good, std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = aitasks_with(&[("AITASKS_CONFIG", good.to_str().unwrap())], &list).await.ok();
    assert_eq!(run.json()["count"], 0);
    assert!(run.stderr.contains("chmod 600"), "{}", run.stderr);
    std::fs::set_permissions(&good, std::fs::Permissions::from_mode(0o600)).unwrap();
    let run = aitasks_with(&[("AITASKS_CONFIG", good.to_str().unwrap())], &list).await.ok();
    assert_eq!(run.stderr, "", "no warning for a private file");
    // The environment over the file.
    let run = aitasks_with(
        &[("AITASKS_CONFIG", bad.to_str().unwrap()), ("AITASKS_URL", &url), ("AITASKS_TOKEN", &token)],
        &list,
    )
    .await
    .ok();
    assert_eq!(run.json()["count"], 0);
    // Flags over the environment.
    let mut args = vec!["--url", url.as_str(), "--token", token.as_str()];
    args.extend(list);
    let run =
        aitasks_with(&[("AITASKS_URL", "http://127.0.0.1:1"), ("AITASKS_TOKEN", "nope")], &args).await.ok();
    assert_eq!(run.json()["count"], 0);
    // The file's bad token, nothing overriding it: the API's 401.
    let wrong = dir.join("wrong-token.toml");
    std::fs::write(&wrong, format!("url = \"{url}\"\ntoken = \"not-a-token\"\n")).unwrap();
    let run =
        aitasks_with(&[], &["--config", wrong.to_str().unwrap(), "list", "--scope", "s", "--json"]).await;
    assert_eq!((run.code, run.json()["error"]["code"].as_str()), (1, Some("UNAUTHORIZED")));

    // The default file: $XDG_CONFIG_HOME/aitasks/config.toml.
    let xdg = dir.join("xdg");
    std::fs::create_dir_all(xdg.join("aitasks")).unwrap();
    std::fs::copy(&good, xdg.join("aitasks/config.toml")).unwrap();
    let run = aitasks_with(&[("XDG_CONFIG_HOME", xdg.to_str().unwrap())], &list).await.ok();
    assert_eq!(run.json()["count"], 0);

    // A config file that is not the documented one, or missing when named: exit 2.
    let typo = dir.join("typo.toml");
    std::fs::write(&typo, "urll = \"x\"\n").unwrap();
    let run = aitasks_with(&[("AITASKS_CONFIG", typo.to_str().unwrap())], &list).await;
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("urll"), "{}", run.stderr);
    let run = aitasks_with(&[("AITASKS_CONFIG", dir.join("missing.toml").to_str().unwrap())], &list).await;
    assert_eq!(run.code, 2);
}

/// A listener that records what each connection sends (up to its headers) and answers 404: a
/// server the token must not reach.
struct Recorder {
    url: String,
    seen: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Recorder {
    fn start() -> Recorder {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = seen.clone();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                stream.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buffer) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                record.lock().unwrap().push(String::from_utf8_lossy(&request).into_owned());
                let _ = stream
                    .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
            }
        });
        Recorder { url, seen }
    }

    fn requests(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

#[tokio::test]
async fn a_config_files_token_goes_only_to_the_files_own_url() {
    let stack = Stack::start().await;
    let url = format!("http://{}", stack.server.address);
    let token = dev_token(APP);
    let elsewhere = Recorder::start();
    let dir = scratch("config-origin");
    let file = dir.join("config.toml");
    std::fs::write(&file, format!("url = \"{url}\"\ntoken = \"{token}\"\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let config = ("AITASKS_CONFIG", file.to_str().unwrap());
    let list = ["list", "--scope", "s", "--json", "--tries", "1"];

    // Another URL from the environment or a flag: refused before anything is sent.
    let run = aitasks_with(&[config, ("AITASKS_URL", &elsewhere.url)], &list).await;
    println!("AITASKS_URL elsewhere, the file's token: exit {}: {}", run.code, run.stderr.trim());
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains(file.to_str().unwrap()) && run.stderr.contains("--token"), "{}", run.stderr);
    let mut args = vec!["--url", elsewhere.url.as_str()];
    args.extend(list);
    let run = aitasks_with(&[config], &args).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(elsewhere.requests(), Vec::<String>::new(), "the file's token went to another URL");

    // The file's own URL, however it is spelled (a trailing slash, a path on the same origin).
    let run = aitasks_with(&[config, ("AITASKS_URL", &format!("{url}/"))], &list).await.ok();
    assert_eq!(run.json()["count"], 0);
    // A token the user gave for that URL goes there.
    let run =
        aitasks_with(&[config, ("AITASKS_URL", &elsewhere.url), ("AITASKS_TOKEN", "aimed-token")], &list)
            .await;
    assert_eq!(run.code, 3, "not the API: {}", run.stderr);
    let sent = elsewhere.requests();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].to_lowercase().contains("authorization: bearer aimed-token"), "{}", sent[0]);
    assert!(!sent[0].contains(&token), "{}", sent[0]);

    // A file with a token and no url: its token goes to the default URL only.
    let bare = dir.join("bare.toml");
    std::fs::write(&bare, format!("token = \"{token}\"\n")).unwrap();
    std::fs::set_permissions(&bare, std::fs::Permissions::from_mode(0o600)).unwrap();
    let run = aitasks_with(&[("AITASKS_CONFIG", bare.to_str().unwrap()), ("AITASKS_URL", &url)], &list).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("http://127.0.0.1:9000"), "{}", run.stderr);
}

#[tokio::test]
async fn plain_http_goes_only_to_loopback_unless_allowed() {
    let remote =
        ["--url", "http://api.example.invalid:9000", "--token", "t", "list", "--scope", "s", "--tries", "1"];
    let run = aitasks_with(&[], &remote).await;
    println!("plain HTTP to another host: exit {}: {}", run.code, run.stderr.trim());
    assert_eq!(run.code, 2, "refused before sending: {}", run.stderr);
    assert!(run.stderr.contains("--allow-insecure-http"), "{}", run.stderr);
    // Allowed: it is tried (and the name does not resolve).
    let mut allowed = vec!["--allow-insecure-http"];
    allowed.extend(remote);
    let run = aitasks_with(&[], &allowed).await;
    assert_eq!(run.code, 3, "tried, unreachable: {}", run.stderr);
    let run = aitasks_with(&[("AITASKS_ALLOW_INSECURE_HTTP", "true")], &remote).await;
    assert_eq!(run.code, 3, "tried, unreachable: {}", run.stderr);
    // HTTPS anywhere, and plain HTTP to a loopback name, are tried.
    for url in ["https://api.example.invalid", "http://localhost:1", "http://127.0.0.2:1", "http://[::1]:1"] {
        let run =
            aitasks_with(&[], &["--url", url, "--token", "t", "list", "--scope", "s", "--tries", "1"]).await;
        assert_eq!(run.code, 3, "{url}: {}", run.stderr);
    }
}
