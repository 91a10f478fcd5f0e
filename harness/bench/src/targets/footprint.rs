//! The Lambda binaries' targets (issue 51), read from the footprint section's report: each under
//! 10 MB (decimal megabytes, the stricter reading), its cold start and peak memory beside it.

use serde_json::Value;

use super::verdict::Target;

/// 10 MB.
const MAX_BYTES: u64 = 10_000_000;

pub(crate) fn targets(report: &Value) -> Vec<Target> {
    let functions = report["footprint"].as_array().cloned().unwrap_or_default();
    if functions.is_empty() {
        return vec![Target::new("each Lambda binary < 10 MB", None, None)];
    }
    functions
        .iter()
        .map(|f| {
            let bytes = f["bytes"].as_u64();
            let figure = bytes.map(|b| {
                // A function that never answered has no cold start or peak worth printing.
                let run = if f["handled"].as_bool() == Some(true) {
                    format!(
                        "ready {:.1} ms, peak {:.1} MB",
                        f["readyMs"].as_f64().unwrap_or(f64::NAN),
                        f["peakRssKiB"].as_f64().unwrap_or(f64::NAN) * 1024.0 / 1e6
                    )
                } else {
                    "no answer".to_owned()
                };
                format!("{:.2} MB; {run}", b as f64 / 1e6)
            });
            Target::new(
                format!("{} binary < 10 MB", f["function"].as_str().unwrap_or("?")),
                figure,
                bytes.map(|b| b < MAX_BYTES),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_binary_is_judged_in_decimal_megabytes_with_its_start_and_memory() {
        let report = json!({"footprint": [
            {"function": "process-task", "bytes": 12_907_000, "readyMs": 9.7, "peakRssKiB": 14_643, "handled": true},
            {"function": "create-task", "bytes": 9_999_999, "readyMs": 6.8, "peakRssKiB": 11_776, "handled": false},
        ]});
        let rows = targets(&report);
        assert_eq!(rows[0].text, "process-task binary < 10 MB");
        assert_eq!(rows[0].figure.as_deref(), Some("12.91 MB; ready 9.7 ms, peak 15.0 MB"));
        assert_eq!(rows[0].met, Some(false));
        assert_eq!((rows[1].figure.as_deref(), rows[1].met), (Some("10.00 MB; no answer"), Some(true)));
        assert_eq!(targets(&json!({}))[0].met, None);
    }
}
