//! Workflows waiting on tasks: a task created over HTTP with a Step Functions task token, one
//! with a Lambda durable callback, and two intake messages as a `sqs:sendMessage.waitForTaskToken`
//! state sends them (one for the queue's tenant, one naming a tenant the queue does not take).
//! The intake mapping runs, then the task queue's; then every token and callback has exactly one
//! answer, each allowed by the caller's role on what the parameters name, and the completion
//! events went to the bus. A template without a grant fails here, as AWS would refuse the call.

use serde_json::{json, Value};

use super::Scenario;

/// The intake queue's function (IntakeAppIds names the scenario's tenant).
pub(super) const INTAKE_FUNCTION: &str = "IntakeTaskFunction";

/// A callback the scenario handed out, and the one answer it expects.
struct Expected {
    what: &'static str,
    token: String,
    action: &'static str,
    function: &'static str,
}

fn classify(effect_key: &str) -> Value {
    json!({"owner": {"scopeId": "workflows"}, "stepKey": "classify", "effectKey": effect_key, "modelId": "default",
           "request": {"kind": "classify", "prompt": "Sentiment?", "input": {"text": "Great!"},
                       "choices": ["positive", "negative"]}})
}

impl Scenario<'_> {
    pub(super) async fn callbacks(&mut self) {
        let workflows = self.rehearsal.workflows.clone();
        let mint = |prefix: &str| format!("{prefix}{}", uuid::Uuid::new_v4().simple());
        let (http_token, durable_id, intake_token, refused_token) =
            (mint("sfn-http-"), mint("Q2I"), mint("sfn-intake-"), mint("sfn-refused-"));
        for token in [&http_token, &intake_token, &refused_token] {
            self.rehearsal.proxy.add_task_token(token, &workflows.state_machine_arn);
        }
        self.rehearsal.proxy.add_callback_id(&durable_id, &workflows.durable_function_arn);

        let mut with_token = classify("rehearsal/workflow/sfn");
        with_token["callback"] = json!({"stepFunctions": {"taskToken": http_token}});
        let mut with_durable = classify("rehearsal/workflow/durable");
        with_durable["callback"] = json!({"lambdaDurable": {"callbackId": durable_id}});
        for body in [with_token, with_durable] {
            self.http("POST", "/v1/tasks", "/v1/tasks", &[], Some(body), 201).await;
        }
        let mut expected = vec![
            Expected {
                what: "a task token given over HTTP",
                token: http_token,
                action: "states:SendTaskSuccess",
                function: "ProcessTaskFunction",
            },
            Expected {
                what: "a durable callback given over HTTP",
                token: durable_id,
                action: "lambda:SendDurableExecutionCallbackSuccess",
                function: "ProcessTaskFunction",
            },
        ];
        let intake = self.rehearsal.queues.get("IntakeQueue").cloned();
        let deployed = self.rehearsal.deployment.functions.contains_key(INTAKE_FUNCTION);
        if let Some(intake) = intake.filter(|_| deployed) {
            let messages = [
                json!({"task": classify("rehearsal/workflow/intake"), "taskToken": intake_token}),
                json!({"appId": "not-this-queues-tenant", "task": classify("x"), "taskToken": refused_token}),
            ];
            for message in messages {
                let sent = self
                    .rehearsal
                    .sqs
                    .client
                    .send_message()
                    .queue_url(&intake.url)
                    .message_body(message.to_string());
                if let Err(error) = sent.send().await {
                    self.step("IntakeQueue", "a workflow sends its task", Err(format!("{error:?}")));
                }
            }
            expected.push(Expected {
                what: "a task token sent with an intake message",
                token: intake_token,
                action: "states:SendTaskSuccess",
                function: "ProcessTaskFunction",
            });
            expected.push(Expected {
                what: "the token of an intake message for another tenant",
                token: refused_token,
                action: "states:SendTaskFailure",
                function: INTAKE_FUNCTION,
            });
            self.event_source_mappings(|mapping| mapping.function == INTAKE_FUNCTION).await;
        } else {
            self.step(
                "IntakeQueue",
                "a workflow sends its task",
                Err("the stack has no intake queue".into()),
            );
        }
        self.event_source_mappings(|mapping| mapping.function == "ProcessTaskFunction").await;
        self.check_answers(&expected);
        self.check_bus(&workflows.event_bus);
    }

    /// Each token and callback got exactly one answer, the one expected, from the function
    /// expected, and the caller's role allowed it (heartbeats aside).
    fn check_answers(&mut self, expected: &[Expected]) {
        let calls = self.rehearsal.proxy.calls();
        for expectation in expected {
            let answers: Vec<_> = calls
                .iter()
                .filter(|c| c.subject.as_deref() == Some(expectation.token.as_str()))
                .filter(|c| !c.action.ends_with("Heartbeat"))
                .collect();
            let denied: Vec<_> = calls
                .iter()
                .filter(|c| {
                    c.subject.as_deref() == Some(expectation.token.as_str()) && !c.decision.is_allowed()
                })
                .map(|c| format!("{} {} on {}", c.function, c.action, c.resource))
                .collect();
            let outcome = match answers.as_slice() {
                _ if !denied.is_empty() => Err(format!("refused as AWS would refuse it: {denied:?}")),
                [one] if one.action == expectation.action && one.function == expectation.function => {
                    Ok(format!("{} by {} on {}", one.action, one.function, one.resource))
                }
                other => Err(format!(
                    "expected one {} by {}, got {:?}",
                    expectation.action,
                    expectation.function,
                    other.iter().map(|c| format!("{} {}", c.function, c.action)).collect::<Vec<_>>()
                )),
            };
            self.step(expectation.function, &format!("callback: {}", expectation.what), outcome);
        }
    }

    /// Completion events went to the bus the parameter names, allowed.
    fn check_bus(&mut self, bus: &str) {
        let puts: Vec<_> =
            self.rehearsal.proxy.calls().into_iter().filter(|c| c.action == "events:PutEvents").collect();
        let outcome = if puts.is_empty() {
            Err("no completion event was put on the bus".to_owned())
        } else if let Some(denied) = puts.iter().find(|c| !c.decision.is_allowed()) {
            Err(format!("{} was refused PutEvents on {}", denied.function, denied.resource))
        } else if let Some(elsewhere) =
            puts.iter().find(|c| !c.resource.ends_with(&format!("event-bus/{bus}")))
        {
            Err(format!("{} put events on {}", elsewhere.function, elsewhere.resource))
        } else {
            let functions: std::collections::BTreeSet<_> = puts.iter().map(|c| c.function.as_str()).collect();
            Ok(format!("{} PutEvents call(s) on {bus}, from {functions:?}", puts.len()))
        };
        self.step("EventBridge", "completion events on the bus", outcome);
    }
}
