//! The summary page's charts (GET /v1/activity) for a known workload: tasks that succeed on two
//! models (one named with hostile text), fail with known error codes (one of them hostile text),
//! and their usage. The charts say the right numbers in their names, in the readout of the
//! bucket the keyboard focuses, and in "Show the numbers"; hostile text stays text; the last
//! hour is redrawn while open once another task ends, the focus kept on its bucket.

use aitasks_testkit::{wait_until, Reply, Stack};
use serde_json::{json, Value};

use crate::webdriver::Browser;
use crate::{open, sign_in};

const APP: &str = "charts-app";
/// A model id and an error code that would run script if they became markup.
const HOSTILE: &str = r#"<img src=x onerror="window.__pwned=1">"#;
const TAB: &str = "\u{E004}";
const LEFT: &str = "\u{E012}";
const END: &str = "\u{E010}";

/// The stub's profile with prices under two names: `default` and the hostile one.
fn models() -> String {
    let profile = json!({"model": "stub-model", "prices": {"inputPerMillion": 2.5, "outputPerMillion": 10}});
    json!({"default": profile, HOSTILE: profile}).to_string()
}

fn classify(run_id: &str, key: &str, model: &str, prompt: &str) -> Value {
    json!({"runId": run_id, "stepKey": "sentiment", "effectKey": key, "modelId": model,
           "request": {"kind": "classify", "prompt": prompt,
                       "input": {"review": "Arrived quickly."}, "choices": ["positive", "negative"]}})
}

/// An attribute of the first element `css` selects ("" when there is none).
async fn attribute(browser: &Browser, css: &str, name: &str) -> String {
    let value = browser
        .eval(
            "const e = document.querySelector(arguments[0]); return e ? e.getAttribute(arguments[1]) : null;",
            json!([css, name]),
        )
        .await;
    value.as_str().unwrap_or_default().to_owned()
}

/// Wait until the SVG of chart `id` is named with `needle`; its name then.
async fn wait_label(browser: &Browser, id: &str, needle: &str) -> String {
    let css = format!("#{id}-svg");
    wait_until(&format!("{css} named with {needle:?}"), || async {
        attribute(browser, &css, "aria-label").await.contains(needle)
    })
    .await;
    attribute(browser, &css, "aria-label").await
}

/// "created 3" in `text`: 3 (0 when absent).
fn number_after(text: &str, word: &str) -> u64 {
    text.split(&format!("{word} "))
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|digits| digits.parse().ok())
        .unwrap_or(0)
}

/// The focused element: its chart's id, its bucket's start, and the chart's readout.
async fn focused(browser: &Browser) -> (String, String, String) {
    let now = browser
        .eval(
            "const e = document.activeElement; const f = e && e.closest ? e.closest('figure.chart') : null; \
             return [f ? f.id : '', e && e.dataset ? (e.dataset.start ?? '') : '', \
                     f ? f.querySelector('.chart-readout').textContent : ''];",
            json!([]),
        )
        .await;
    let field = |i: usize| now[i].as_str().unwrap_or_default().to_owned();
    (field(0), field(1), field(2))
}

#[tokio::test]
async fn the_summary_charts_show_a_known_workload_live_and_hostile_text_as_text() {
    let models = models();
    let stack = Stack::start_with(&[("AITASK_MODELS", models.as_str())]).await;
    // A prompt saying "bad-request" is refused with a 400 (WORKFLOW_AI_PROVIDER_ERROR), one
    // saying "no-key" with a 401 (AI_PROVIDER_AUTH); neither is retried. The rest succeed, with
    // the stub's usage: 11 input and 7 output tokens, $0.0000975 at these prices.
    stack.stub.set_default(Reply::Matching {
        needle: "bad-request".into(),
        then: Box::new(Reply::status(400)),
        otherwise: Box::new(Reply::Matching {
            needle: "no-key".into(),
            then: Box::new(Reply::status(401)),
            otherwise: Box::new(Reply::Auto),
        }),
    });
    let api = stack.api(APP);
    let (status, run) = api.post("/v1/runs", &json!({"scopeId": "charts"})).await;
    assert_eq!(status, 201, "{run}");
    let run_id = run["id"].as_str().unwrap().to_owned();
    let workload = [
        ("default", "Sentiment?"),
        ("default", "Sentiment?"),
        ("default", "Sentiment?"),
        (HOSTILE, "Sentiment?"),
        ("default", "Sentiment? bad-request"),
        ("default", "Sentiment? bad-request"),
        ("default", "Sentiment? no-key"),
    ];
    let mut codes = Vec::new();
    for (i, (model, prompt)) in workload.iter().enumerate() {
        let (status, task) =
            api.post("/v1/tasks", &classify(&run_id, &format!("chart-{i}"), model, prompt)).await;
        assert_eq!(status, 201, "{task}");
        let done = api.wait_terminal(task["id"].as_str().unwrap()).await;
        codes.push(done["errorCode"].as_str().unwrap_or("").to_owned());
    }
    assert_eq!(
        codes,
        ["", "", "", "", "WORKFLOW_AI_PROVIDER_ERROR", "WORKFLOW_AI_PROVIDER_ERROR", "AI_PROVIDER_AUTH"],
        "the workload ended as planned"
    );
    // An error code is the platform's own: hostile text can only be one as a stored row, here a
    // queued task that fails with it (counted as any task that ends is).
    let hostile_code = HOSTILE.replace('\'', "''");
    stack
        .db
        .sql(&format!(
            "INSERT INTO tasks (id, app_id, scope_id, step_key, effect_key, kind, request, input_hash, \
                 model_id, max_attempts, status, attempts) \
             VALUES ('00000000-0000-7000-8000-00000000c4a7', '{APP}', 'charts', 'sentiment', 'chart-hostile', \
                 'classify', '{{}}', repeat('0', 64), 'default', 1, 'queued', 0); \
             UPDATE tasks SET status = 'failed', error_code = '{hostile_code}', \
                 error_message = 'Stored as it is.', completed_at = now() \
             WHERE id = '00000000-0000-7000-8000-00000000c4a7'"
        ))
        .await;

    let browser = sign_in(&stack, APP).await;
    open(&browser, &stack, "#/summary?window=hour").await;
    let throughput = wait_label(&browser, "chart-throughput", "In all").await;
    assert!(throughput.contains("created 8; succeeded 4; failed 4."), "{throughput}");
    let failures = wait_label(&browser, "chart-failures", "In all").await;
    for expected in ["WORKFLOW_AI_PROVIDER_ERROR 2", "AI_PROVIDER_AUTH 1", &format!("{HOSTILE} 1")] {
        assert!(failures.contains(expected), "{expected} in {failures}");
    }
    // 3 tasks of `default` and 1 of the hostile model, at $0.0000975 each.
    let cost = wait_label(&browser, "chart-cost", "In all").await;
    for expected in ["default $0.00029250", &format!("{HOSTILE} $0.00009750")] {
        assert!(cost.contains(expected), "{expected} in {cost}");
    }
    let latency = wait_label(&browser, "chart-latency", "run time p95 highest").await;
    assert!(latency.contains("queue wait p50 highest"), "{latency}");

    // By keyboard: from the window's choice, Tab reaches the throughput chart's latest bucket;
    // the arrow keys walk back. The readouts of the last four minutes hold the whole workload.
    browser.click("#activity-window-hour").await;
    browser.keys(&[TAB]).await;
    let mut read = Vec::new();
    for step in 0..4 {
        if step > 0 {
            browser.keys(&[LEFT]).await;
        }
        let (chart, start, readout) = focused(&browser).await;
        assert_eq!(chart, "chart-throughput", "the focus is on a bucket of the chart");
        assert!(!start.is_empty() && readout.contains(" UTC: created "), "{readout}");
        read.push(readout);
    }
    let sum = |word: &str| read.iter().map(|r| number_after(r, word)).sum::<u64>();
    assert_eq!((sum("created"), sum("succeeded"), sum("failed")), (8, 4, 4), "{read:?}");

    // The numbers as a table, and the hostile code and model as text.
    browser.click("#chart-failures-numbers summary").await;
    let table = browser.wait_text("#chart-failures-numbers", "AI_PROVIDER_AUTH").await;
    assert!(table.contains(HOSTILE) && table.contains("WORKFLOW_AI_PROVIDER_ERROR"), "{table}");
    let legend = browser.text("#chart-cost .chart-legend").await.unwrap_or_default();
    assert!(legend.contains(HOSTILE) && legend.contains("default"), "{legend}");
    let effects = browser
        .eval(
            "return [window.__pwned ?? null, document.querySelectorAll('main img, main script, main iframe').length]",
            json!([]),
        )
        .await;
    assert_eq!(effects, json!([null, 0]), "nothing ran, nothing became an element");

    // Live: with the focus on a bucket, one more task ends; the open chart counts it within a
    // read or two, and the focus stays on the same bucket.
    browser.click("#chart-failures-numbers summary").await;
    browser.click("#activity-window-hour").await;
    browser.keys(&[TAB, END]).await;
    let (chart, start, _) = focused(&browser).await;
    assert_eq!(chart, "chart-throughput", "the focus is back on the chart");
    let (status, task) =
        api.post("/v1/tasks", &classify(&run_id, "chart-live", "default", "Sentiment?")).await;
    assert_eq!(status, 201, "{task}");
    let done = api.wait_terminal(task["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "succeeded", "{done}");
    let updated = wait_label(&browser, "chart-throughput", "created 9; succeeded 5; failed 4.").await;
    assert!(updated.contains("last hour, by minute"), "{updated}");
    let (chart_after, start_after, readout) = focused(&browser).await;
    assert_eq!(
        (chart_after.as_str(), start_after.as_str()),
        ("chart-throughput", start.as_str()),
        "focus kept"
    );
    assert!(readout.contains(" UTC: created "), "{readout}");
    // Seconds and a redraw later, still nothing ran (an image's error handler would have).
    let later = browser.eval("return window.__pwned ?? null", json!([])).await;
    assert_eq!(later, Value::Null, "nothing ran");
    browser.screenshot("summary").await;
    browser.quit().await;
}
