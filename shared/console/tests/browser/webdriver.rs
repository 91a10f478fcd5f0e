//! Headless Chromium driven over WebDriver (chromedriver from the OS packages), with a small
//! client of the protocol's HTTP commands: a page, its elements, clicks, keys, scripts and
//! screenshots. Chromium runs with a fresh profile and no network but loopback.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

/// WebDriver's key for an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";
/// How long a wait for the page lasts unless told otherwise.
pub(crate) const WAIT: Duration = Duration::from_secs(20);

fn binary(variable: &str, default: &str) -> PathBuf {
    let path = std::env::var_os(variable).map(PathBuf::from).unwrap_or_else(|| PathBuf::from(default));
    assert!(
        path.exists(),
        "{} is missing: install Chromium and its WebDriver (`scripts/chromium.sh install`; Debian: \
         apt-get install chromium chromium-driver), or name them with CHROMIUM_BIN and CHROMEDRIVER_BIN",
        path.display()
    );
    path
}

/// A browser session. Dropping it kills chromedriver and the Chromium it started (their
/// process group); [`Browser::quit`] ends the session first.
pub struct Browser {
    http: reqwest::Client,
    session: String,
    driver: Child,
    profile: PathBuf,
}

impl Browser {
    pub async fn start() -> Browser {
        let chromium = binary("CHROMIUM_BIN", "/usr/bin/chromium");
        let chromedriver = binary("CHROMEDRIVER_BIN", "/usr/bin/chromedriver");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let log_dir = aitasks_testkit::workspace_root().join("target/e2e-logs");
        std::fs::create_dir_all(&log_dir).unwrap();
        let log = std::fs::File::create(log_dir.join(format!("chromedriver-{port}.log"))).unwrap();
        let driver = {
            use std::os::unix::process::CommandExt;
            Command::new(chromedriver)
                .arg(format!("--port={port}"))
                .stdout(Stdio::from(log.try_clone().unwrap()))
                .stderr(Stdio::from(log))
                .process_group(0)
                .spawn()
                .expect("start chromedriver")
        };
        let profile = std::env::temp_dir().join(format!("aitasks-console-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&profile).unwrap();
        let http = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{port}");
        let mut browser = Browser { http, session: base.clone(), driver, profile };
        for _ in 0..200 {
            let ready = browser.http.get(format!("{base}/status")).send().await;
            if let Ok(answer) = ready {
                if answer.json::<Value>().await.is_ok_and(|v| v["value"]["ready"] == true) {
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                         "--disable-background-networking", "--disable-component-update", "--disable-sync",
                         "--disable-dev-shm-usage", "--window-size=1366,768",
                         format!("--user-data-dir={}", browser.profile.display())],
            },
        }}});
        let answer = browser.http.post(format!("{base}/session")).json(&capabilities).send().await;
        let answer: Value = answer.expect("chromedriver answers").json().await.expect("JSON");
        let id = answer["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("no session: {answer}"));
        browser.session = format!("{base}/session/{id}");
        browser
    }

    async fn command(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, Value> {
        let mut request = self.http.request(method, format!("{}{path}", self.session));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer = request.send().await.expect("chromedriver answers");
        let ok = answer.status().is_success();
        let value: Value = answer.json().await.expect("JSON");
        if ok {
            Ok(value["value"].clone())
        } else {
            Err(value["value"].clone())
        }
    }

    async fn must(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let what = format!("{method} {path}");
        self.command(method, path, body).await.unwrap_or_else(|e| panic!("{what}: {e}"))
    }

    pub async fn goto(&self, url: &str) {
        self.must(reqwest::Method::POST, "/url", Some(json!({"url": url}))).await;
    }

    /// Run a script in the page (`arguments[0]`...); its return value.
    pub async fn eval(&self, script: &str, args: Value) -> Value {
        self.must(reqwest::Method::POST, "/execute/sync", Some(json!({"script": script, "args": args}))).await
    }

    /// The rendered text of the first element `css` selects (`None` when there is none).
    pub async fn text(&self, css: &str) -> Option<String> {
        let value = self
            .eval(
                "const e = document.querySelector(arguments[0]); return e ? e.innerText : null;",
                json!([css]),
            )
            .await;
        value.as_str().map(str::to_owned)
    }

    /// Wait until the first element `css` selects shows `needle`; its text then.
    pub async fn wait_text(&self, css: &str, needle: &str) -> String {
        self.wait_text_for(css, needle, WAIT).await
    }

    pub async fn wait_text_for(&self, css: &str, needle: &str, timeout: Duration) -> String {
        let until = tokio::time::Instant::now() + timeout;
        loop {
            let text = self.text(css).await;
            if text.as_deref().is_some_and(|t| t.contains(needle)) {
                return text.unwrap_or_default();
            }
            if tokio::time::Instant::now() >= until {
                let page = self.text("body").await.unwrap_or_default();
                panic!("{css} never showed {needle:?} (it shows {text:?}); the page:\n{page}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The element `css` selects, once it is there.
    pub async fn element(&self, css: &str) -> String {
        let until = tokio::time::Instant::now() + WAIT;
        loop {
            let found = self
                .command(
                    reqwest::Method::POST,
                    "/element",
                    Some(json!({"using": "css selector", "value": css})),
                )
                .await;
            if let Ok(value) = found {
                return value[ELEMENT].as_str().expect("an element reference").to_owned();
            }
            assert!(tokio::time::Instant::now() < until, "no element {css}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Click what `css` selects, as a user would (it must be visible and enabled).
    pub async fn click(&self, css: &str) {
        let element = self.element(css).await;
        self.must(reqwest::Method::POST, &format!("/element/{element}/click"), Some(json!({}))).await;
    }

    /// Clear the field `css` selects and type `text` into it.
    pub async fn type_into(&self, css: &str, text: &str) {
        let element = self.element(css).await;
        self.must(reqwest::Method::POST, &format!("/element/{element}/clear"), Some(json!({}))).await;
        self.must(reqwest::Method::POST, &format!("/element/{element}/value"), Some(json!({"text": text})))
            .await;
    }

    /// Press these keys, one after another, where the focus is (WebDriver's key codes:
    /// `"\u{E004}"` Tab, `"\u{E012}"` ArrowLeft, `"\u{E014}"` ArrowRight).
    pub async fn keys(&self, keys: &[&str]) {
        let actions: Vec<Value> = keys
            .iter()
            .flat_map(|key| {
                [json!({"type": "keyDown", "value": key}), json!({"type": "keyUp", "value": key})]
            })
            .collect();
        let body = json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]});
        self.must(reqwest::Method::POST, "/actions", Some(body)).await;
    }

    /// Move the pointer over the middle of what `css` selects.
    pub async fn hover(&self, css: &str) {
        let element = self.element(css).await;
        let origin = json!({ELEMENT: element});
        let body = json!({"actions": [{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
                                       "actions": [{"type": "pointerMove", "duration": 0, "origin": origin, "x": 0, "y": 0}]}]});
        self.must(reqwest::Method::POST, "/actions", Some(body)).await;
    }

    /// The page as it looks now, to `target/console-screenshots/NAME.png`, and to
    /// `docs/console/NAME.png` as well when `CONSOLE_SCREENSHOTS=docs`.
    pub async fn screenshot(&self, name: &str) {
        let value = self.must(reqwest::Method::GET, "/screenshot", None).await;
        let png =
            base64::engine::general_purpose::STANDARD.decode(value.as_str().expect("base64")).expect("a PNG");
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        let root = aitasks_testkit::workspace_root();
        let mut folders = vec![root.join("target/console-screenshots")];
        if std::env::var("CONSOLE_SCREENSHOTS").as_deref() == Ok("docs") {
            folders.push(root.join("docs/console"));
        }
        for folder in folders {
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join(format!("{name}.png")), &png).unwrap();
        }
    }

    /// End the session (Chromium exits), then chromedriver.
    pub async fn quit(mut self) {
        let _ = self.command(reqwest::Method::DELETE, "", None).await;
        self.kill();
    }

    fn kill(&mut self) {
        let group = format!("-{}", self.driver.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.driver.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if self.driver.try_wait().ok().flatten().is_none() {
            self.kill();
        }
    }
}
