//! The demo's live output: a task's text printed as the model writes it, read from the route a
//! reader resumes from an offset (docs/api.md, "Live output"), until the task ends.

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{Client, Failure};

/// Print the task's text as it comes, then how it ended.
pub(crate) async fn follow(client: &Client, task_id: &str) -> Result<(), Failure> {
    let mut segment: Option<i64> = None;
    let mut after = 0;
    let mut pieces = 0;
    let mut first_text: Option<Duration> = None;
    let until = Instant::now() + Duration::from_secs(300);
    print!("  ");
    while Instant::now() < until {
        let mut path = format!("/v1/tasks/{task_id}/output?after={after}&wait=20");
        if let Some(segment) = segment {
            path.push_str(&format!("&segment={segment}"));
        }
        let (status, read) = client.call(reqwest::Method::GET, &path, None).await?;
        if status != 200 {
            println!();
            client.say(&format!("live-poem      the read answered HTTP {status}: {read}"));
            return Ok(());
        }
        if read["segment"].as_i64() != segment && segment.is_some() {
            print!("\n  --- attempt {} starts over ---\n  ", read["attempt"]);
        }
        segment = read["segment"].as_i64();
        after = read["next"].as_i64().unwrap_or(after);
        let text = read["text"].as_str().unwrap_or_default();
        if !text.is_empty() {
            pieces += 1;
            first_text.get_or_insert_with(|| client.started.elapsed());
            print!("{}", text.replace('\n', "\n  "));
            std::io::stdout().flush()?;
        }
        if read["ended"] == Value::Bool(true) && text.is_empty() {
            println!();
            let (_, task) = client.call(reqwest::Method::GET, &format!("/v1/tasks/{task_id}"), None).await?;
            client.say(&format!(
                "live-poem      -> {}; the text came in {pieces} reads; the output: {}",
                task["status"].as_str().unwrap_or("?"),
                task["output"]
            ));
            return Ok(());
        }
    }
    println!();
    client.say("live-poem      did not end in time");
    Ok(())
}
