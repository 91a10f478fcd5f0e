//! What the stack promises its operators beyond what AWS itself checks, judged before anything
//! runs, like the [`preconditions`](crate::preconditions): a stack that deploys without them
//! loses messages or fails silently, so the rehearsal refuses it.
//!
//! - Every queue a function of the stack consumes (an SQS event source mapping) has a
//!   `RedrivePolicy` whose `deadLetterTargetArn` is a queue of the stack, with a
//!   `maxReceiveCount`; and an alarm of the stack watches that dead-letter queue (an
//!   `AWS::CloudWatch::Alarm` whose `QueueName` dimension names it). Without a redrive policy a
//!   message that always fails is delivered again until its retention ends, and nothing tells
//!   anyone; without the alarm it reaches the dead-letter queue unseen.
//! - Every alarm the documentation names (a backquoted name ending in `Alarm` in README.md,
//!   SCALING.md or docs/*.md) is an `AWS::CloudWatch::Alarm` of the template, whatever its
//!   condition. A backquoted pattern (`<Function>ErrorsAlarm`) cannot be checked, so it is
//!   refused too: the documents name each alarm.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::deployment::{Deployment, QueueMapping, QueueSpec};
use crate::preconditions::Checked;
use crate::report::Step;
use crate::Failure;

/// The documents that promise alarms, as `(path from the root, text)`.
pub fn documents(root: &Path) -> Result<Vec<(String, String)>, Failure> {
    let mut paths = vec!["README.md".to_owned(), "SCALING.md".to_owned()];
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))?
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(root.join(&path)).map_err(|e| format!("{path}: {e}"))?;
            Ok((path, text))
        })
        .collect()
}

/// [`check`] with the documents of the checkout at `root` (a document that cannot be read is a
/// refusal: the promises could not be checked).
pub fn check_checkout(deployment: &Deployment, template: &Value, root: &Path) -> Checked {
    match documents(root) {
        Ok(documents) => check(deployment, template, &documents),
        Err(error) => Checked {
            steps: vec![Step {
                function: "template".to_owned(),
                label: ALARMS.to_owned(),
                outcome: Err(format!("the documentation could not be read: {error}")),
            }],
            advice: Vec::new(),
        },
    }
}

const ALARMS: &str = "alarms the documentation names";

/// Check the dead-letter queues of the consumed queues on the resolved stack, and the alarms the
/// documents name on the template as written (`template`, before conditions are applied).
pub fn check(deployment: &Deployment, template: &Value, documents: &[(String, String)]) -> Checked {
    let mut checked = Checked::default();
    for mapping in &deployment.queue_mappings {
        let queue = deployment.queues.iter().find(|q| q.arn == mapping.queue_arn);
        let label = match queue {
            Some(queue) => format!("dead-letter queue of {}", queue.logical_id),
            None => format!("dead-letter queue of {}", mapping.queue_arn),
        };
        let outcome = match queue {
            Some(queue) => dead_letter_queue(deployment, mapping, queue),
            None => Ok("the queue is not the stack's: its redrive policy is its owner's".to_owned()),
        };
        checked.steps.push(Step { function: mapping.function.clone(), label, outcome });
    }
    checked.steps.push(Step {
        function: "template".to_owned(),
        label: ALARMS.to_owned(),
        outcome: promised_alarms(template, documents),
    });
    checked
}

fn dead_letter_queue(
    deployment: &Deployment,
    mapping: &QueueMapping,
    queue: &QueueSpec,
) -> Result<String, String> {
    let consumer = &mapping.function;
    let without = format!(
        "{} is consumed by {consumer} but has no dead-letter queue: a message that always fails is \
         delivered again and again until its retention period ends, and no alarm fires. Give the \
         queue a RedrivePolicy (deadLetterTargetArn: a queue of the stack, maxReceiveCount above \
         the attempts it needs) and an alarm on that queue's ApproximateNumberOfMessagesVisible",
        queue.logical_id
    );
    let policy: Value = match queue.attributes.get("RedrivePolicy") {
        Some(text) => serde_json::from_str(text).unwrap_or(Value::String(text.clone())),
        None => return Err(without),
    };
    let target = policy["deadLetterTargetArn"].as_str().unwrap_or_default();
    if target.is_empty() {
        return Err(without);
    }
    let Some(dead_letters) = deployment.queues.iter().find(|q| q.arn == target) else {
        return Err(format!(
            "{}'s RedrivePolicy names {target} as its dead-letter queue, which is no queue of the stack \
             (no alarm of the stack can watch it)",
            queue.logical_id
        ));
    };
    let receives = policy["maxReceiveCount"]
        .as_u64()
        .or_else(|| policy["maxReceiveCount"].as_str().and_then(|s| s.trim().parse().ok()));
    let Some(receives) = receives.filter(|n| *n >= 1) else {
        return Err(format!("{}'s RedrivePolicy has no maxReceiveCount", queue.logical_id));
    };
    let name = target.rsplit(':').next().unwrap_or_default();
    let alarms = alarms_on_queue(&deployment.resolved, name);
    if alarms.is_empty() {
        return Err(format!(
            "{}'s dead-letter queue {} has no alarm: a message that reaches it is seen by nobody. \
             Add an AWS::CloudWatch::Alarm on its ApproximateNumberOfMessagesVisible (dimension \
             QueueName)",
            queue.logical_id, dead_letters.logical_id
        ));
    }
    Ok(format!("{} after {receives} receives, watched by {}", dead_letters.logical_id, alarms.join(", ")))
}

/// The alarms of the resolved stack with a `QueueName` dimension of `name`.
fn alarms_on_queue(resolved: &Value, name: &str) -> Vec<String> {
    let resources = resolved["Resources"].as_object().into_iter().flatten();
    resources
        .filter(|(_, resource)| resource["Type"] == "AWS::CloudWatch::Alarm")
        .filter(|(_, resource)| {
            resource["Properties"]["Dimensions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|d| d["Name"] == "QueueName" && d["Value"].as_str() == Some(name))
        })
        .map(|(id, _)| id.clone())
        .collect()
}

/// Every alarm the documents name is an alarm of the template.
fn promised_alarms(template: &Value, documents: &[(String, String)]) -> Result<String, String> {
    let mut promised: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    let mut patterns: Vec<String> = Vec::new();
    for (path, text) in documents {
        for name in backquoted(text).filter(|name| name.len() > "Alarm".len() && name.ends_with("Alarm")) {
            if name.chars().all(|c| c.is_ascii_alphanumeric())
                && name.starts_with(|c: char| c.is_ascii_uppercase())
            {
                let places = promised.entry(name.to_owned()).or_default();
                if !places.contains(&path.as_str()) {
                    places.push(path);
                }
            } else {
                patterns.push(format!("`{name}` ({path})"));
            }
        }
    }
    let resources = &template["Resources"];
    let missing: Vec<String> = promised
        .iter()
        .filter(|(name, _)| resources[name.as_str()]["Type"] != "AWS::CloudWatch::Alarm")
        .map(|(name, places)| format!("{name} ({})", places.join(", ")))
        .collect();
    let mut problems = Vec::new();
    if !missing.is_empty() {
        problems
            .push(format!("the documentation promises alarms the template lacks: {}", missing.join("; ")));
    }
    if !patterns.is_empty() {
        problems.push(format!(
            "the documentation names alarms by a pattern, which cannot be checked: {}; name each alarm",
            patterns.join("; ")
        ));
    }
    if problems.is_empty() {
        Ok(format!("{} alarm(s), each in the template", promised.len()))
    } else {
        Err(problems.join(". "))
    }
}

/// The text between each pair of backquotes on a line (code spans; fenced blocks' lines hold
/// none that matter here).
fn backquoted(text: &str) -> impl Iterator<Item = &str> {
    text.lines().flat_map(|line| line.split('`').skip(1).step_by(2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TASKS: &str = "arn:aws:sqs:us-east-1:1:r-Tasks";
    const DEAD: &str = "arn:aws:sqs:us-east-1:1:r-Dead";

    /// A resolved stack: a worker consuming `Tasks`, the `Dead` queue, and these extra resources.
    fn stack(tasks: Value, extra: Value) -> Deployment {
        let mut resources = json!({
            "Worker": {
                "Type": "AWS::Lambda::Function", "PhysicalId": "stack-Worker",
                "Arn": "arn:aws:lambda:us-east-1:1:function:stack-Worker",
                "Metadata": {"BuildProperties": {"Binary": "worker"}},
                "Properties": {"Timeout": 30, "Role": "arn:aws:iam::1:role/stack-WorkerRole"}
            },
            "WorkerRole": {"Type": "AWS::IAM::Role", "PhysicalId": "stack-WorkerRole", "Properties": {}},
            "Tasks": {"Type": "AWS::SQS::Queue", "PhysicalId": "tasks-url", "Arn": TASKS, "Properties": tasks},
            "Dead": {"Type": "AWS::SQS::Queue", "PhysicalId": "dead-url", "Arn": DEAD, "Properties": {}},
            "Mapping": {"Type": "AWS::Lambda::EventSourceMapping",
                        "Properties": {"EventSourceArn": TASKS, "FunctionName": "stack-Worker"}},
        });
        for (key, value) in extra.as_object().into_iter().flatten() {
            resources[key] = value.clone();
        }
        Deployment::from_resolved(json!({ "Resources": resources })).expect("a resolved stack")
    }

    fn redrive() -> Value {
        json!({"VisibilityTimeout": 180, "RedrivePolicy": {"deadLetterTargetArn": DEAD, "maxReceiveCount": 5}})
    }

    fn alarm_on(queue_name: &str) -> Value {
        json!({"DeadAlarm": {"Type": "AWS::CloudWatch::Alarm", "Properties": {
            "MetricName": "ApproximateNumberOfMessagesVisible",
            "Dimensions": [{"Name": "QueueName", "Value": queue_name}]}}})
    }

    fn refusals(checked: &Checked) -> Vec<String> {
        checked.steps.iter().filter_map(|s| s.outcome.clone().err()).collect()
    }

    #[test]
    fn a_consumed_queue_with_a_watched_dead_letter_queue_passes() {
        let checked = check(&stack(redrive(), alarm_on("r-Dead")), &json!({}), &[]);
        assert!(!checked.refused(), "{:?}", checked.steps);
        let step = &checked.steps[0];
        assert_eq!((step.function.as_str(), step.label.as_str()), ("Worker", "dead-letter queue of Tasks"));
        assert_eq!(step.outcome.as_deref(), Ok("Dead after 5 receives, watched by DeadAlarm"));
    }

    #[test]
    fn a_consumed_queue_without_a_redrive_policy_is_refused() {
        let checked = check(&stack(json!({"VisibilityTimeout": 180}), alarm_on("r-Dead")), &json!({}), &[]);
        let refusals = refusals(&checked);
        assert_eq!(refusals.len(), 1, "{refusals:?}");
        assert!(
            refusals[0].starts_with("Tasks is consumed by Worker but has no dead-letter queue"),
            "{}",
            refusals[0]
        );
        assert!(refusals[0].contains("until its retention period ends"), "{}", refusals[0]);
    }

    #[test]
    fn a_dead_letter_queue_elsewhere_without_a_count_or_without_an_alarm_is_refused() {
        let elsewhere = json!({"RedrivePolicy": {"deadLetterTargetArn": "arn:aws:sqs:us-east-1:1:other", "maxReceiveCount": 5}});
        let no_count = json!({"RedrivePolicy": {"deadLetterTargetArn": DEAD}});
        for (tasks, extra, expected) in [
            (elsewhere, alarm_on("r-Dead"), "which is no queue of the stack"),
            (no_count, alarm_on("r-Dead"), "has no maxReceiveCount"),
            (redrive(), json!({}), "Tasks's dead-letter queue Dead has no alarm"),
            (redrive(), alarm_on("r-Tasks"), "Tasks's dead-letter queue Dead has no alarm"),
        ] {
            let refusals = refusals(&check(&stack(tasks.clone(), extra), &json!({}), &[]));
            assert!(refusals.iter().any(|r| r.contains(expected)), "{tasks}: {refusals:?}");
        }
    }

    #[test]
    fn every_alarm_the_documents_name_must_be_in_the_template() {
        let template = json!({"Resources": {
            "ApiAlarm": {"Type": "AWS::CloudWatch::Alarm", "Condition": "Sometimes"},
            "NotAnAlarm": {"Type": "AWS::SQS::Queue"},
        }});
        let documents = |text: &str| vec![("README.md".to_owned(), text.to_owned())];
        let step =
            |text: &str| check(&Deployment::default(), &template, &documents(text)).steps.pop().unwrap();

        let fine =
            step("| `ApiAlarm` | the API failed |\nSee `ApiAlarm`, `AlarmTopicArn` and the word `Alarm`.");
        assert_eq!(fine.outcome.as_deref(), Ok("1 alarm(s), each in the template"));
        assert_eq!(
            (fine.function.as_str(), fine.label.as_str()),
            ("template", "alarms the documentation names")
        );

        let missing = step("`ApiAlarm`, `QueueAlarm` and `NotAnAlarm`.").outcome.unwrap_err();
        assert_eq!(
            missing,
            "the documentation promises alarms the template lacks: NotAnAlarm (README.md); QueueAlarm (README.md)"
        );
        let pattern = step("| `<Function>ErrorsAlarm` | failed |").outcome.unwrap_err();
        assert!(pattern.contains("`<Function>ErrorsAlarm` (README.md); name each alarm"), "{pattern}");
    }

    #[test]
    fn the_documents_are_readme_scaling_and_docs() {
        let root = aitasks_testkit::workspace_root();
        let paths: Vec<String> =
            documents(&root).expect("the documents").into_iter().map(|(p, _)| p).collect();
        for expected in ["README.md", "SCALING.md", "docs/api.md", "docs/events.md", "docs/lifecycle.md"] {
            assert!(paths.iter().any(|p| p == expected), "{expected} in {paths:?}");
        }
    }
}
