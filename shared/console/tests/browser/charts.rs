//! The summary page's charts (GET /v1/activity) for a known workload: tasks that succeed on two
//! models (one named with hostile text), fail with known error codes (one of them hostile text),
//! and their usage. The charts say the right numbers in their names, in the readout of the
//! bucket the keyboard focuses, and in "Show the numbers"; hostile text stays text; the last
//! hour is redrawn while open once another task ends, the focus kept on its bucket. And an hour of
//! a busy tenant's activity, stored as the triggers count it, a bucket a minute and in every
//! window (the photograph of the summary).

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
    browser.screenshot("summary-live").await;
    browser.quit().await;
}

/// One stored minute of a model's activity (a row as migrations/V40's triggers count them).
struct Minute {
    ago: u32,
    model: &'static str,
    created: u64,
    failures: Vec<(&'static str, u64)>,
    wait_bins: (usize, usize),
    run_bins: (usize, usize),
    input_per_task: u64,
    output_per_task: u64,
    /// US dollars a million input and output tokens.
    prices: (f64, f64),
}

impl Minute {
    fn failed(&self) -> u64 {
        self.failures.iter().map(|(_, n)| n).sum()
    }

    fn succeeded(&self) -> u64 {
        self.created - self.failed()
    }

    /// A histogram (56 log-scale bins) of `ended` samples: all but one in `bins.0`, one in `bins.1`.
    /// The row's `times` (migrations/V40): queue waits in bin b at slot 2b - 1, run times at 2b.
    fn times(&self) -> String {
        let ended = self.created;
        let mut counts = [0u64; 114];
        counts[2 * self.wait_bins.0 - 2] = ended - 1;
        counts[2 * self.wait_bins.1 - 2] += 1;
        counts[2 * self.run_bins.0 - 1] = ended - 1;
        counts[2 * self.run_bins.1 - 1] += 1;
        format!("'{{{}}}'::integer[]", counts.map(|c| c.to_string()).join(","))
    }

    fn row(&self, app: &str) -> String {
        let failures: serde_json::Map<String, Value> =
            self.failures.iter().map(|(code, n)| ((*code).to_owned(), json!(n))).collect();
        let (input, output) =
            (self.succeeded() * self.input_per_task, self.succeeded() * self.output_per_task);
        let cost = input as f64 * self.prices.0 / 1e6 + output as f64 * self.prices.1 / 1e6;
        format!(
            "('{app}', date_trunc('minute', now()) - interval '{} minutes', 1, 0, '{}', {}, {}, {}, 0, '{}'::jsonb, {}, {input}, {output}, {cost})",
            self.ago,
            self.model,
            self.created,
            self.succeeded(),
            self.failed(),
            Value::Object(failures),
            self.times(),
        )
    }
}

/// An hour of a busy tenant's activity: two models, a few failures of three codes.
fn an_hour() -> Vec<Minute> {
    let mut minutes = Vec::new();
    for ago in 1..=58u32 {
        let n = u64::from(ago);
        let failures = match (n % 11, n % 4) {
            (0, _) => vec![("WORKFLOW_AI_PROVIDER_ERROR", 2), ("AI_OUTPUT_TRUNCATED", 1)],
            (_, 0) => vec![("WORKFLOW_AI_PROVIDER_ERROR", 1)],
            _ => vec![],
        };
        minutes.push(Minute {
            ago,
            model: "default",
            created: 6 + (n * 7) % 5 + if (20..26).contains(&n) { 6 } else { 0 },
            failures,
            wait_bins: (14 + (n % 3) as usize, 19 + (n % 4) as usize),
            run_bins: (20 + (n % 2) as usize, 23),
            input_per_task: 850,
            output_per_task: 120,
            prices: (2.5, 10.0),
        });
        minutes.push(Minute {
            ago,
            model: "large",
            created: 2 + n % 3,
            failures: if n % 13 == 0 { vec![("WORKFLOW_AI_QUEUE_TIMEOUT", 2)] } else { vec![] },
            wait_bins: (15, 21),
            run_bins: (23, 25 + (n % 2) as usize),
            input_per_task: 1400,
            output_per_task: 300,
            prices: (5.0, 15.0),
        });
    }
    minutes
}

#[tokio::test]
async fn an_hour_of_stored_activity_is_charted_bucket_by_bucket() {
    const BUSY: &str = "charts-busy";
    let stack = Stack::start_with(&[("AITASK_LOCAL_POLLERS", "0")]).await;
    // An hour as the triggers would have counted it (its tasks are not needed: the read and the
    // charts see only these rows), so the page shows the shape of an hour.
    let hour = an_hour();
    let rows: Vec<String> = hour.iter().map(|m| m.row(BUSY)).collect();
    stack
        .db
        .sql(&format!(
            "INSERT INTO activity (app_id, starts_at, minutes, writer, model_id, created, succeeded, failed, \
                 canceled, failures, times, input_tokens, output_tokens, cost_usd) VALUES {}",
            rows.join(", ")
        ))
        .await;
    // And by the hour, as the sweeper's fold writes the same minutes (the longer windows read these).
    stack
        .db
        .sql(&format!(
            "INSERT INTO activity (app_id, starts_at, minutes, writer, model_id, created, succeeded, failed, \
                 canceled, failures, times, input_tokens, output_tokens, cost_usd) \
             SELECT app_id, date_trunc('hour', starts_at, 'UTC'), 60, 0, model_id, sum(created), sum(succeeded), \
                 sum(failed), sum(canceled), counts_sum(failures), histogram_sum(times), sum(input_tokens), \
                 sum(output_tokens), sum(cost_usd) \
             FROM activity WHERE app_id = '{BUSY}' AND minutes = 1 GROUP BY 1, 2, 5"
        ))
        .await;
    let total = |f: &dyn Fn(&Minute) -> u64| hour.iter().map(f).sum::<u64>();
    let (created, succeeded, failed) =
        (total(&|m| m.created), total(&|m| m.succeeded()), total(&|m| m.failed()));
    let code = |c: &str| total(&|m| m.failures.iter().filter(|(k, _)| *k == c).map(|(_, n)| n).sum());

    let browser = sign_in(&stack, BUSY).await;
    open(&browser, &stack, "#/summary?window=hour").await;
    let throughput = wait_label(&browser, "chart-throughput", "In all").await;
    assert!(
        throughput.contains(&format!("created {created}; succeeded {succeeded}; failed {failed}.")),
        "{throughput}"
    );
    let failures = wait_label(&browser, "chart-failures", "In all").await;
    for name in ["WORKFLOW_AI_PROVIDER_ERROR", "AI_OUTPUT_TRUNCATED", "WORKFLOW_AI_QUEUE_TIMEOUT"] {
        assert!(failures.contains(&format!("{name} {}", code(name))), "{name} in {failures}");
    }
    // Every minute with a task is a row of the table, and each is its own bucket.
    browser.click("#chart-throughput-numbers summary").await;
    let rows = browser
        .eval("return document.querySelectorAll('#chart-throughput-numbers tbody tr').length", json!([]))
        .await;
    assert_eq!(rows, json!(58), "a row a minute");
    browser.click("#chart-throughput-numbers summary").await;
    // The pointer over a bucket: the line under the chart says its numbers, as its name does.
    let bucket = "#chart-throughput .chart-col[data-index='30']";
    browser.hover(bucket).await;
    let said = browser.text("#chart-throughput-readout").await.unwrap_or_default();
    assert_eq!(said, attribute(&browser, bucket, "aria-label").await);
    assert!(said.contains(" UTC: created ") && said.contains(", failed "), "{said}");
    wait_label(&browser, "chart-cost", "large $").await;
    wait_label(&browser, "chart-latency", "run time p95 highest").await;
    // The picture of the charts: a bucket of the busy stretch focused, its numbers read out (the
    // page scrolled first, so that the pointer rests on the window's choice, not on a chart).
    browser.eval("document.getElementById('activity').scrollIntoView()", json!([])).await;
    browser.click("#activity-window-hour").await;
    browser.keys(&[TAB, END]).await;
    browser.keys(&[LEFT; 23]).await;
    let (chart, _, readout) = focused(&browser).await;
    assert_eq!(chart, "chart-throughput");
    assert!(readout.contains(" UTC: created "), "{readout}");
    browser.screenshot("summary").await;

    // The other windows hold the same hour in their buckets (and leave the URL saying which).
    for (key, text) in [
        ("day", "last 24 hours, by hour"),
        ("week", "last 7 days, by hour"),
        ("month", "last 30 days, by day"),
    ] {
        browser.click(&format!("#activity-window-{key}")).await;
        let label = wait_label(&browser, "chart-throughput", text).await;
        assert!(
            label.contains(&format!("created {created}; succeeded {succeeded}; failed {failed}.")),
            "{label}"
        );
        let hash = browser.eval("return location.hash", json!([])).await;
        let expected = if key == "day" { "#/summary".to_owned() } else { format!("#/summary?window={key}") };
        assert_eq!(hash, json!(expected));
    }
    browser.quit().await;
}
