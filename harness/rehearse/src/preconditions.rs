//! What AWS itself refuses when CloudFormation creates the stack, checked on the resolved
//! template before anything runs. A stack AWS would roll back is refused here too, with the
//! resource, the values and the rule; nothing of it runs. What AWS accepts but advises against
//! is advice: printed, not a problem.
//!
//! Refused, as Lambda refuses it:
//! - an SQS event source mapping (`CreateEventSourceMapping`) whose queue hides a received
//!   message for less time than the function may run; whose batch size is outside 1 to 10,000
//!   (1 to 10 on a FIFO queue); whose batch size is above 10 without a batching window of at
//!   least 1 s; whose batching window is above 300 s, or set at all on a FIFO queue; or whose
//!   function's role may not receive, delete, or read the queue's attributes;
//! - a function whose dead-letter queue its own role may not send to (`CreateFunction`).
//!
//! Advised: the queue's visibility timeout at least six times the function's timeout plus the
//! batching window (so a batch the mapping retries after a throttle is not delivered twice),
//! and reserved concurrency no lower than the mapping's maximum concurrency (or the mapping is
//! throttled and its messages come back).

use crate::deployment::{Deployment, Function, QueueMapping, QueueSpec};
use crate::iam::evaluate;
use crate::report::Step;

/// The checks' verdicts: one step per mapping and per dead-letter queue, and the advice.
#[derive(Debug, Default)]
pub struct Checked {
    pub steps: Vec<Step>,
    pub advice: Vec<String>,
}

impl Checked {
    /// Whether AWS would refuse the stack.
    pub fn refused(&self) -> bool {
        self.steps.iter().any(|step| step.outcome.is_err())
    }
}

/// Check every event source mapping and dead-letter queue of the stack.
pub fn check(deployment: &Deployment) -> Checked {
    let mut checked = Checked::default();
    for mapping in &deployment.queue_mappings {
        let queue = deployment.queues.iter().find(|q| q.arn == mapping.queue_arn);
        let queue_name = queue
            .map(|q| q.logical_id.clone())
            .unwrap_or_else(|| mapping.queue_arn.rsplit(':').next().unwrap_or_default().to_owned());
        let label = format!("event source mapping from {queue_name}");
        let outcome = match deployment.functions.get(&mapping.function) {
            Some(function) => {
                checked.advice.extend(advice(mapping, function, queue));
                let refusals = refusals(mapping, function, queue);
                if refusals.is_empty() {
                    Ok(summary(mapping, function, queue))
                } else {
                    Err(format!("AWS refuses to create it: {}", refusals.join("; ")))
                }
            }
            None => {
                Err(format!("AWS refuses to create it: {} is no function of the stack", mapping.function))
            }
        };
        checked.steps.push(Step { function: mapping.function.clone(), label, outcome });
    }
    for function in deployment.functions.values() {
        if let Some(target) = &function.dead_letter_target {
            checked.steps.push(dead_letter_queue(function, target));
        }
    }
    checked
}

fn refusals(mapping: &QueueMapping, function: &Function, queue: Option<&QueueSpec>) -> Vec<String> {
    let mut refusals = Vec::new();
    let (batch, window) = (mapping.batch_size, mapping.batching_window_seconds);
    let fifo = queue.is_some_and(QueueSpec::is_fifo) || mapping.queue_arn.ends_with(".fifo");
    if let Some(queue) = queue {
        let visibility = queue.visibility_timeout_seconds();
        if visibility < function.timeout_seconds {
            refusals.push(format!(
                "{}'s VisibilityTimeout is {visibility} s, less than {}'s Timeout of {} s (Lambda: \
                 \"Queue visibility timeout: {visibility} seconds is less than Function timeout: {} \
                 seconds\"). The rule: an SQS queue's visibility timeout must be at least the timeout \
                 of the function it triggers, or a message would reappear while the function still \
                 runs; AWS advises six times the timeout plus the batching window ({} s)",
                queue.logical_id,
                function.logical_id,
                function.timeout_seconds,
                function.timeout_seconds,
                advised_visibility(function, mapping)
            ));
        }
    }
    let (kind, most) = if fifo { ("a FIFO", 10) } else { ("a standard", 10_000) };
    if !(1..=most).contains(&batch) {
        refusals.push(format!("BatchSize {batch} is outside 1 to {most}, the range on {kind} queue"));
    }
    if !fifo && batch > 10 && window < 1 {
        refusals.push(format!(
            "BatchSize {batch} is above 10, which needs MaximumBatchingWindowInSeconds of at least 1 \
             (it is {window})"
        ));
    }
    if window > 300 {
        refusals.push(format!("MaximumBatchingWindowInSeconds {window} is above 300"));
    }
    if fifo && window > 0 {
        refusals.push(format!(
            "MaximumBatchingWindowInSeconds {window} on a FIFO queue, which takes no batching window"
        ));
    }
    for action in ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"] {
        if !evaluate(&function.statements, action, &mapping.queue_arn).is_allowed() {
            refusals.push(format!(
                "{}'s role may not call {action} on {}, which the mapping calls with it",
                function.logical_id, mapping.queue_arn
            ));
        }
    }
    refusals
}

/// Six times the function's timeout plus the batching window: AWS's advice for an SQS source.
fn advised_visibility(function: &Function, mapping: &QueueMapping) -> u64 {
    6 * function.timeout_seconds + mapping.batching_window_seconds
}

fn advice(mapping: &QueueMapping, function: &Function, queue: Option<&QueueSpec>) -> Vec<String> {
    let mut advice = Vec::new();
    let advised = advised_visibility(function, mapping);
    if let Some(queue) = queue {
        let visibility = queue.visibility_timeout_seconds();
        if visibility >= function.timeout_seconds && visibility < advised {
            advice.push(format!(
                "{}'s VisibilityTimeout of {visibility} s is less than six times {}'s Timeout plus \
                 the batching window ({advised} s), as AWS advises for an SQS event source: a batch \
                 the mapping retries after a throttle can be delivered twice",
                queue.logical_id, function.logical_id
            ));
        }
    }
    if let (Some(reserved), Some(maximum)) = (function.reserved_concurrency, mapping.maximum_concurrency) {
        if reserved < maximum {
            advice.push(format!(
                "{}'s reserved concurrency ({reserved}) is below its event source mapping's \
                 MaximumConcurrency ({maximum}): the mapping is throttled and its messages come back \
                 to the queue",
                function.logical_id
            ));
        }
    }
    advice
}

fn summary(mapping: &QueueMapping, function: &Function, queue: Option<&QueueSpec>) -> String {
    let visibility = match queue {
        Some(queue) => format!(
            "visibility timeout {} s, at least {}'s {} s timeout",
            queue.visibility_timeout_seconds(),
            function.logical_id,
            function.timeout_seconds
        ),
        None => "the queue is not the stack's: its visibility timeout is not checked".to_owned(),
    };
    format!(
        "{visibility}; batch size {}, batching window {} s; the role may receive, delete and read \
         attributes",
        mapping.batch_size, mapping.batching_window_seconds
    )
}

fn dead_letter_queue(function: &Function, target: &str) -> Step {
    let action = if target.contains(":sns:") { "sns:Publish" } else { "sqs:SendMessage" };
    let outcome = if evaluate(&function.statements, action, target).is_allowed() {
        Ok(format!("its role may call {action} on {target}"))
    } else {
        Err(format!(
            "AWS refuses to create the function: its role may not call {action} on its dead-letter \
             queue {target}"
        ))
    };
    Step { function: function.logical_id.clone(), label: "dead-letter queue".to_owned(), outcome }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    const QUEUE: &str = "arn:aws:sqs:us-east-1:1:tasks";

    /// A resolved stack: one function (timeout 300 s) on one queue, its role allowed `actions`
    /// on the queue.
    fn stack(queue: Value, mapping: Value, actions: &[&str]) -> Deployment {
        let queue_arn = if queue["FifoQueue"] == true { format!("{QUEUE}.fifo") } else { QUEUE.to_owned() };
        let mut mapping_properties = json!({
            "EventSourceArn": queue_arn, "FunctionName": "stack-Worker", "BatchSize": 10,
        });
        for (key, value) in mapping.as_object().into_iter().flatten() {
            mapping_properties[key] = value.clone();
        }
        Deployment::from_resolved(json!({"Resources": {
            "Worker": {
                "Type": "AWS::Lambda::Function", "PhysicalId": "stack-Worker",
                "Arn": "arn:aws:lambda:us-east-1:1:function:stack-Worker",
                "Metadata": {"BuildProperties": {"Binary": "worker"}},
                "Properties": {"Timeout": 300, "ReservedConcurrentExecutions": 50,
                               "Role": "arn:aws:iam::1:role/stack-WorkerRole"}
            },
            "WorkerRole": {
                "Type": "AWS::IAM::Role", "PhysicalId": "stack-WorkerRole",
                "Properties": {"Policies": [{"PolicyName": "queue", "PolicyDocument": {"Statement": [
                    {"Effect": "Allow", "Action": actions, "Resource": queue_arn}
                ]}}]}
            },
            "Tasks": {"Type": "AWS::SQS::Queue", "PhysicalId": "tasks-url", "Arn": queue_arn,
                      "Properties": queue},
            "Mapping": {"Type": "AWS::Lambda::EventSourceMapping", "Properties": mapping_properties},
        }}))
        .expect("a resolved stack")
    }

    const POLLER: &[&str] = &["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"];

    fn refusal(checked: &Checked) -> String {
        checked.steps.iter().find_map(|s| s.outcome.clone().err()).unwrap_or_default()
    }

    #[test]
    fn a_mapping_as_the_template_has_it_passes_without_advice() {
        let checked = check(&stack(json!({"VisibilityTimeout": 1800}), json!({}), POLLER));
        assert!(!checked.refused(), "{:?}", checked.steps);
        assert!(checked.advice.is_empty(), "{:?}", checked.advice);
        assert_eq!(checked.steps[0].label, "event source mapping from Tasks");
    }

    #[test]
    fn a_visibility_timeout_below_the_function_timeout_is_refused_naming_both() {
        let text = refusal(&check(&stack(json!({"VisibilityTimeout": 60}), json!({}), POLLER)));
        assert!(
            text.contains("Tasks's VisibilityTimeout is 60 s, less than Worker's Timeout of 300 s"),
            "{text}"
        );
        assert!(text.contains("Queue visibility timeout: 60 seconds is less than Function timeout: 300"));
        // No VisibilityTimeout at all is SQS's 30 s.
        let text = refusal(&check(&stack(json!({}), json!({}), POLLER)));
        assert!(text.contains("VisibilityTimeout is 30 s"), "{text}");
    }

    #[test]
    fn a_visibility_timeout_under_six_times_is_advice_not_a_refusal() {
        let checked = check(&stack(
            json!({"VisibilityTimeout": 600}),
            json!({"MaximumBatchingWindowInSeconds": 5}),
            POLLER,
        ));
        assert!(!checked.refused());
        assert_eq!(checked.advice.len(), 1, "{:?}", checked.advice);
        assert!(checked.advice[0].contains("(1805 s)"), "{}", checked.advice[0]);
    }

    #[test]
    fn batch_sizes_and_windows_follow_the_queue_kind() {
        let standard = json!({"VisibilityTimeout": 1800});
        let fifo = json!({"VisibilityTimeout": 1800, "FifoQueue": true});
        for (queue, mapping, expected) in [
            (&standard, json!({"BatchSize": 11}), Some("needs MaximumBatchingWindowInSeconds of at least 1")),
            (&standard, json!({"BatchSize": 11, "MaximumBatchingWindowInSeconds": 1}), None),
            (&standard, json!({"BatchSize": 10_000, "MaximumBatchingWindowInSeconds": 300}), None),
            (
                &standard,
                json!({"BatchSize": 10_001, "MaximumBatchingWindowInSeconds": 1}),
                Some("outside 1 to 10000"),
            ),
            (&standard, json!({"BatchSize": 0}), Some("outside 1 to 10000")),
            (&standard, json!({"MaximumBatchingWindowInSeconds": 301}), Some("above 300")),
            (&fifo, json!({"BatchSize": 10}), None),
            (&fifo, json!({"BatchSize": 11}), Some("outside 1 to 10, the range on a FIFO queue")),
            (&fifo, json!({"MaximumBatchingWindowInSeconds": 1}), Some("takes no batching window")),
        ] {
            let checked = check(&stack(queue.clone(), mapping.clone(), POLLER));
            match expected {
                Some(text) => assert!(refusal(&checked).contains(text), "{mapping}: {}", refusal(&checked)),
                None => assert!(!checked.refused(), "{mapping}: {}", refusal(&checked)),
            }
        }
    }

    #[test]
    fn a_role_that_cannot_poll_the_queue_is_refused() {
        let checked = check(&stack(
            json!({"VisibilityTimeout": 1800}),
            json!({}),
            &["sqs:ReceiveMessage", "sqs:DeleteMessage"],
        ));
        assert!(refusal(&checked).contains(&format!("may not call sqs:GetQueueAttributes on {QUEUE}")));
    }

    #[test]
    fn reserved_concurrency_below_the_maximum_concurrency_is_advice() {
        let checked = check(&stack(
            json!({"VisibilityTimeout": 1800}),
            json!({"ScalingConfig": {"MaximumConcurrency": 100}}),
            POLLER,
        ));
        assert!(!checked.refused());
        assert!(
            checked.advice.iter().any(|a| a.contains("reserved concurrency (50)")),
            "{:?}",
            checked.advice
        );
    }

    #[test]
    fn a_dead_letter_queue_the_role_cannot_send_to_is_refused() {
        let mut deployment = stack(json!({"VisibilityTimeout": 1800}), json!({}), POLLER);
        let worker = deployment.functions.get_mut("Worker").expect("worker");
        worker.dead_letter_target = Some("arn:aws:sqs:us-east-1:1:sweeps-dlq".into());
        let checked = check(&deployment);
        assert!(refusal(&checked).contains("may not call sqs:SendMessage on its dead-letter queue"));
        worker_may_send(&mut deployment);
        assert!(!check(&deployment).refused());
    }

    fn worker_may_send(deployment: &mut Deployment) {
        let worker = deployment.functions.get_mut("Worker").expect("worker");
        let document = json!({"Statement": [
            {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "arn:aws:sqs:us-east-1:1:sweeps-dlq"}
        ]});
        worker.statements.extend(crate::iam::Statement::from_document("dlq", &document).expect("statement"));
    }
}
