//! The web console in a real browser: headless Chromium (the OS package) driven over WebDriver
//! by chromedriver, against the dev server on the stub provider (Postgres, the SQS-compatible
//! server, an HTTP server speaking the provider's wire format). What a user sees and does:
//! sign in, runs, a run's tasks, a task going from queued to succeeded without a reload, a failed
//! attempt's error and the cost, cancel with a confirmation, "try a task" of every kind, the
//! summary; tasks selected and canceled after a confirmation that counts them, "all that match"
//! as an operation followed to its end, replay from a task's page, holds held and released;
//! another tenant's task is not found; a running task's answer grows on its page as the stub
//! streams it; runs' progress bars, moving live on a run's page; hostile text stays text,
//! streamed or not; the summary's charts of a known workload, by name, keyboard and table, live
//! for the last hour. Screenshots of each
//! page go to target/console-screenshots (and docs/console with `CONSOLE_SCREENSHOTS=docs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod charts;
mod flow;
mod holds;
mod hostile;
mod live;
mod operations;
mod progress;
mod reads;
mod selection;
mod tenancy;
mod webdriver;

use aitasks_testkit::Stack;
use webdriver::Browser;

/// The stub's profile with prices, so tasks carry an estimated cost.
pub const MODELS: &str =
    r#"{"default": {"model": "stub-model", "prices": {"inputPerMillion": 2.5, "outputPerMillion": 10}}}"#;

/// Open the console on `stack` and sign in as `app`; the runs page is showing.
pub async fn sign_in(stack: &Stack, app: &str) -> Browser {
    let browser = Browser::start().await;
    browser.goto(&console_url(stack)).await;
    browser.type_into("#token", &aitasks_testkit::dev_token(app)).await;
    browser.click("#signin").await;
    browser.wait_text("main h1", "Runs").await;
    browser
}

pub fn console_url(stack: &Stack) -> String {
    format!("http://{}/console", stack.server.address)
}

/// Go to a console route (`#/tasks/<id>`) in the page already open.
pub async fn open(browser: &Browser, stack: &Stack, hash: &str) {
    browser.goto(&format!("{}{hash}", console_url(stack))).await;
}
