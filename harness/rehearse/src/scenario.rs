//! The rehearsal's script: every trigger of the stack, in the order a first deploy and its first
//! traffic would fire them, each checked for what a user would see.
//!
//! 0. CloudFormation creates the stack: what AWS would refuse ([`preconditions`]) ends the
//!    rehearsal there, as the stack's rollback would; so does a stack without what it promises
//!    its operators ([`promises`]: dead-letter queues with alarms, the documented alarms).
//! 1. CloudFormation creates the migrations custom resource: the migrate function applies the
//!    schema to the empty database and answers `SUCCESS` to the pre-signed URL.
//! 2. Every HTTP route, through the JWT authorizer's event shape: runs, a scoped task and a run
//!    task, reads, a cancel, a run cancel. The web console's two routes ([`console`]), the only
//!    ones without the authorizer, with no token.
//! 3. The SQS event source mapping: polls the task queue with process-task's role (batch size
//!    from the template), invokes process-task, deletes what it did not report as failed. The
//!    provider's first answer is a 503, so the retry path (the requeue, the message's visibility
//!    set to the backoff) runs too.
//! 4. The task is read back `succeeded`; release, the unreleased-sources listing and a source's
//!    deletion.
//! 5. Workflows waiting on tasks ([`callbacks`]): tasks created with a Step Functions token and
//!    a durable callback, intake messages (one taken, one from a tenant the queue does not
//!    take); the intake queue's mapping, the task queue's again; each token and callback is
//!    answered once, by a function whose role allows it, and events reach the bus.
//! 6. The schedule invokes the sweeper; so does each EventBridge rule that targets a function
//!    (Bedrock's batch job state changes, with BatchBedrockModelArns), with an event its pattern
//!    matches, once its `AWS::Lambda::Permission` is found. A deferred task created after the
//!    HTTP steps goes through Bedrock batch inference ([`bedrock_batch`]): sweeps form and
//!    submit its batch, and find it completed and settle the task (succeeded once).
//! 7. CloudFormation updates, then deletes, the custom resource.
//!
//! Then: the completion events reached the events queue, and the provider saw the key and the
//! credential header from their secrets; a function no step reached (because an earlier one failed) is still started, so its
//! cold start is judged too. Every AWS call any function made is in the report with the statement that allowed it;
//! a call no statement allows is a problem.

use std::collections::BTreeMap;
use std::time::Duration;

use aitasks_contracts::TaskStatus;
use aitasks_testkit::runtime_api::Answer;
use serde_json::{json, Value};

use crate::deployment::QueueMapping;
use crate::events;
use crate::function_process::{FunctionProcess, Invocation};
use crate::preconditions;
use crate::promises;
use crate::report::{Report, Step};
use crate::Rehearsal;

mod bedrock_batch;
mod callbacks;
mod console;
mod http;

pub const TENANT: &str = "rehearsal-app";

struct Scenario<'a> {
    rehearsal: &'a Rehearsal,
    processes: BTreeMap<String, FunctionProcess>,
    /// Functions whose start failed (reported once).
    broken: BTreeMap<String, String>,
    report: Report,
}

/// Run the whole script and return what happened.
pub async fn run(rehearsal: &Rehearsal) -> Report {
    let mut scenario = Scenario {
        rehearsal,
        processes: BTreeMap::new(),
        broken: BTreeMap::new(),
        report: Report::new(rehearsal),
    };
    // What AWS refuses at deploy: CloudFormation would roll the stack back, so nothing runs.
    // Nor does a stack that breaks what it promises its operators (promises.rs).
    let checked = preconditions::check(&rehearsal.deployment);
    let mut refused = checked.refused();
    scenario.report.advice = checked.advice;
    scenario.report.steps.extend(checked.steps);
    let promised =
        promises::check_checkout(&rehearsal.deployment, &rehearsal.template, &rehearsal.options.root);
    refused |= promised.refused();
    scenario.report.steps.extend(promised.steps);
    if refused {
        let mut report = scenario.report;
        report.finish(rehearsal.proxy.calls());
        return report;
    }
    let physical_ids = scenario.custom_resources("Create", &BTreeMap::new()).await;
    let ids = scenario.http_before_processing().await;
    scenario.console().await;
    let deferred = scenario.submit_deferred_batch().await;
    // The provider's first answer is a 503: the worker requeues the task and sets its message's
    // visibility to the backoff (sqs:ChangeMessageVisibility, judged like every call), reports
    // the record as failed, and the mapping delivers it again.
    rehearsal.stub.script([aitasks_testkit::Reply::status(503)]);
    // Then every answer streams, slower than a flush interval: the deployed worker writes its
    // live output, which `http_after_processing` reads through the API.
    rehearsal.stub.set_default(aitasks_testkit::Reply::Streamed {
        inner: Box::new(aitasks_testkit::Reply::Auto),
        piece_chars: 2,
        every: std::time::Duration::from_millis(60),
    });
    scenario.event_source_mappings(|mapping| mapping.function != callbacks::INTAKE_FUNCTION).await;
    if let Some(ids) = &ids {
        scenario.http_after_processing(ids).await;
    }
    scenario.callbacks().await;
    scenario.schedules().await;
    scenario.event_rules().await;
    if let Some(deferred) = &deferred {
        scenario.settle_deferred_batch(deferred).await;
    }
    let physical_ids = scenario.custom_resources("Update", &physical_ids).await;
    scenario.custom_resources("Delete", &physical_ids).await;
    if let Some(ids) = &ids {
        scenario.check_events(ids, deferred.as_ref()).await;
    }
    scenario.check_provider_key();
    scenario.check_message_groups();
    if let Some(ids) = &ids {
        scenario.check_traces(ids).await;
    }
    // A function the script could not reach (an earlier step failed) still gets its cold start.
    for logical_id in rehearsal.deployment.functions.keys() {
        scenario.process(logical_id).await;
    }
    let mut report = scenario.report;
    for (logical_id, process) in &scenario.processes {
        report.cold_starts.insert(logical_id.clone(), process.cold_start);
    }
    report.finish(rehearsal.proxy.calls());
    report
}

/// The ids the HTTP steps created.
struct Ids {
    scoped_task: String,
    run_task: String,
}

impl Scenario<'_> {
    fn step(&mut self, function: &str, label: &str, outcome: Result<String, String>) {
        self.report.steps.push(Step { function: function.to_owned(), label: label.to_owned(), outcome });
    }

    /// The running process of a function, started on first use (its cold start).
    async fn process(&mut self, logical_id: &str) -> Option<&mut FunctionProcess> {
        if self.broken.contains_key(logical_id) {
            return None;
        }
        if !self.processes.contains_key(logical_id) {
            match self.rehearsal.start(logical_id).await {
                Ok(process) => {
                    if let Some(error) = process.init_error() {
                        let problem =
                            format!("{logical_id} failed at cold start: {error}\n{}", process.log_tail(5));
                        self.step(logical_id, "cold start", Err(problem.clone()));
                        self.broken.insert(logical_id.to_owned(), problem);
                        return None;
                    }
                    self.processes.insert(logical_id.to_owned(), process);
                }
                Err(error) => {
                    self.step(logical_id, "cold start", Err(error.to_string()));
                    self.broken.insert(logical_id.to_owned(), error.to_string());
                    return None;
                }
            }
        }
        self.processes.get_mut(logical_id)
    }

    async fn invoke(&mut self, logical_id: &str, label: &str, event: Value) -> Option<Value> {
        // Started (cold start) first: calls from now on belong to this event.
        self.process(logical_id).await?;
        self.rehearsal.proxy.set_phase(logical_id, label);
        let process = self.processes.get_mut(logical_id)?;
        let invocation = process.invoke(event).await;
        let tail = process.log_tail(8);
        match invocation {
            Invocation::Answered(Answer::Response(value)) => Some(value),
            Invocation::Answered(Answer::Error(error)) => {
                self.step(logical_id, label, Err(format!("the invocation failed: {error}\n{tail}")));
                None
            }
            Invocation::Failed(why) => {
                self.step(logical_id, label, Err(format!("{why}\n{tail}")));
                None
            }
        }
    }

    /// Be the SQS event source mappings `which` selects (in that order): poll with the
    /// function's role, invoke, delete.
    async fn event_source_mappings(&mut self, which: impl Fn(&QueueMapping) -> bool) {
        let mappings: Vec<QueueMapping> =
            self.rehearsal.deployment.queue_mappings.iter().filter(|m| which(m)).cloned().collect();
        for mapping in mappings {
            let label =
                format!("SQS delivery from {}", mapping.queue_arn.rsplit(':').next().unwrap_or_default());
            let Some(queue) = self.rehearsal.queues.values().find(|q| q.arn == mapping.queue_arn).cloned()
            else {
                self.step(
                    &mapping.function,
                    &label,
                    Err(format!("no local queue for {}", mapping.queue_arn)),
                );
                continue;
            };
            if !mapping.report_batch_item_failures {
                self.step(
                    &mapping.function,
                    &label,
                    Err("the mapping does not set ReportBatchItemFailures".into()),
                );
            }
            let sqs = match self.rehearsal.sqs_as(&mapping.function).await {
                Ok(sqs) => sqs,
                Err(error) => {
                    self.step(&mapping.function, &label, Err(error.to_string()));
                    continue;
                }
            };
            let (mut handled, mut retried, mut empty_polls) = (0usize, 0usize, 0);
            // A retried record is hidden for its backoff (1 s): a few empty polls outlast it.
            while empty_polls < 4 {
                self.rehearsal.proxy.set_phase(&mapping.function, "event source mapping (poll)");
                let received = sqs
                    .receive_message()
                    .queue_url(&queue.url)
                    .max_number_of_messages(mapping.batch_size.clamp(1, 10) as i32)
                    .wait_time_seconds(1)
                    .message_system_attribute_names(aws_sdk_sqs::types::MessageSystemAttributeName::All)
                    .send()
                    .await;
                let messages = match received {
                    Ok(out) => out.messages.unwrap_or_default(),
                    Err(error) => {
                        let error = aws_sdk_sqs::error::DisplayErrorContext(&error).to_string();
                        self.step(
                            &mapping.function,
                            &label,
                            Err(format!("the mapping cannot poll: {error}")),
                        );
                        break;
                    }
                };
                if messages.is_empty() {
                    empty_polls += 1;
                    continue;
                }
                let event = events::sqs_batch(&mapping.queue_arn, &messages);
                let Some(answer) = self.invoke(&mapping.function, &label, event).await else { break };
                let failed: Vec<String> = answer["batchItemFailures"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|f| f["itemIdentifier"].as_str().map(str::to_owned))
                    .collect();
                // A reported failure is a retry (the first provider answer is a 503): the record
                // stays on the queue and comes back after the backoff. Whether every task ends
                // as it should is checked after the mapping has drained the queue.
                retried += failed.len();
                self.rehearsal.proxy.set_phase(&mapping.function, "event source mapping (delete)");
                let entries: Vec<_> = messages
                    .iter()
                    .filter(|m| !m.message_id().is_some_and(|id| failed.iter().any(|f| f == id)))
                    .enumerate()
                    .filter_map(|(i, m)| {
                        aws_sdk_sqs::types::DeleteMessageBatchRequestEntry::builder()
                            .id(i.to_string())
                            .receipt_handle(m.receipt_handle().unwrap_or_default())
                            .build()
                            .ok()
                    })
                    .collect();
                if !entries.is_empty() {
                    if let Err(error) = sqs
                        .delete_message_batch()
                        .queue_url(&queue.url)
                        .set_entries(Some(entries))
                        .send()
                        .await
                    {
                        let error = aws_sdk_sqs::error::DisplayErrorContext(&error).to_string();
                        self.step(
                            &mapping.function,
                            &label,
                            Err(format!("the mapping cannot delete: {error}")),
                        );
                    }
                }
                handled += messages.len();
            }
            if handled == 0 {
                self.step(&mapping.function, &label, Err("no message reached the queue".into()));
            } else {
                self.step(
                    &mapping.function,
                    &label,
                    Ok(format!(
                        "{handled} deliveries ({retried} retried), batches of up to {}",
                        mapping.batch_size
                    )),
                );
            }
        }
    }

    async fn http_after_processing(&mut self, ids: &Ids) {
        let path = format!("/v1/tasks/{}", ids.scoped_task);
        if let Some(task) = self.http("GET", "/v1/tasks/{taskId}", &path, &[("wait", "10")], None, 200).await
        {
            let outcome = if task["status"] != TaskStatus::Succeeded.as_str() {
                Err(format!("ended {}: {task}", task["status"]))
            } else if task["attempts"] != 2 {
                Err(format!("expected one retry after the provider's 503: {task}"))
            } else {
                Ok(format!("succeeded on its retry: {}", task["output"]))
            };
            self.step("ProcessTaskFunction", "the scoped task", outcome);
            self.live_output(&ids.scoped_task, &task["output"]).await;
        }
        let released = self
            .http(
                "POST",
                "/v1/tasks/release",
                "/v1/tasks/release",
                &[],
                Some(json!({"scopeId": "docs", "effectKey": "rehearsal/sentiment"})),
                200,
            )
            .await;
        if released.is_some_and(|r| r["released"] != true) {
            self.step("ReleaseDeleteFunction", "release", Err("nothing was released".into()));
        }
        self.http("GET", "/v1/unreleased-sources", "/v1/unreleased-sources", &[], None, 200).await;
        let deleted = self
            .http(
                "DELETE",
                "/v1/scopes/{scopeId}/tasks",
                "/v1/scopes/docs/tasks",
                &[("sourceId", "doc-1")],
                None,
                200,
            )
            .await;
        if deleted.is_some_and(|d| d["deleted"] != 1) {
            self.step(
                "ReleaseDeleteFunction",
                "delete a source's data",
                Err("expected one task deleted".into()),
            );
        }
    }

    async fn schedules(&mut self) {
        for schedule in self.rehearsal.deployment.schedules.clone() {
            let label = format!("schedule {}", schedule.expression);
            if let Some(answer) = self.invoke(&schedule.function, &label, schedule.input.clone()).await {
                self.step(&schedule.function, &label, Ok(format!("{answer}")));
            }
        }
    }

    /// Be EventBridge for each rule that targets a function: an event its pattern matches (the
    /// first `source` and `detail-type` it names), sent only if a Lambda permission lets the
    /// rule invoke the function, as in AWS.
    async fn event_rules(&mut self) {
        for rule in self.rehearsal.deployment.event_rules.clone() {
            let label = format!("EventBridge rule {}", rule.logical_id);
            if !rule.permitted {
                let problem = format!(
                    "{} targets {} but no AWS::Lambda::Permission lets events.amazonaws.com invoke it with SourceArn {}: EventBridge's invocations would fail",
                    rule.logical_id, rule.function, rule.arn
                );
                self.step(&rule.function, &label, Err(problem));
                continue;
            }
            let job = format!(
                "arn:aws:bedrock:{}:{}:model-invocation-job/rehearsal-job",
                crate::local_aws::REGION,
                events::ACCOUNT
            );
            let event = events::rule_event(&rule, &job, "Completed");
            if let Some(answer) = self.invoke(&rule.function, &label, event).await {
                self.step(&rule.function, &label, Ok(format!("{answer}")));
            }
        }
    }

    /// Send every custom resource a request of this type; the physical ids they answered.
    async fn custom_resources(
        &mut self,
        request_type: &str,
        physical_ids: &BTreeMap<String, String>,
    ) -> BTreeMap<String, String> {
        let mut answered = BTreeMap::new();
        for resource in self.rehearsal.deployment.custom_resources.clone() {
            let label = format!("{} {request_type}", resource.resource_type);
            let (url, key) = self.rehearsal.bucket.presigned_url();
            let event = events::custom_resource_request(
                &resource,
                request_type,
                &url,
                &self.rehearsal.stack_id,
                physical_ids.get(&resource.logical_id).map(String::as_str),
            );
            if self.invoke(&resource.function, &label, event).await.is_none() {
                continue;
            }
            match self.rehearsal.bucket.response(&key) {
                Some(response) if response["Status"] == "SUCCESS" => {
                    if let Some(id) = response["PhysicalResourceId"].as_str() {
                        answered.insert(resource.logical_id.clone(), id.to_owned());
                    }
                    self.step(&resource.function, &label, Ok(format!("SUCCESS: {}", response["Reason"])));
                }
                Some(response) => {
                    let reason: String =
                        response["Reason"].as_str().unwrap_or_default().chars().take(400).collect();
                    self.step(
                        &resource.function,
                        &label,
                        Err(format!("answered {}: {reason}", response["Status"])),
                    );
                }
                None => self.step(&resource.function, &label, Err("CloudFormation got no answer".into())),
            }
        }
        answered
    }

    async fn check_events(&mut self, ids: &Ids, deferred: Option<&bedrock_batch::DeferredBatch>) {
        let Some(queue) = self.rehearsal.queues.get("EventsQueue") else { return };
        let bodies = match self.rehearsal.sqs.drain(&queue.url, Duration::from_secs(2)).await {
            Ok(bodies) => bodies,
            Err(error) => {
                self.step("EventsQueue", "completion events", Err(error.to_string()));
                return;
            }
        };
        let events: Vec<(String, String)> = bodies
            .iter()
            .filter_map(|b| serde_json::from_str::<Value>(b).ok())
            .filter(|e| e["type"] == "task.settled")
            .filter_map(|e| Some((e["taskId"].as_str()?.to_owned(), e["status"].as_str()?.to_owned())))
            .collect();
        let settled: BTreeMap<String, String> = events.iter().cloned().collect();
        let mut expected = vec![
            (ids.scoped_task.clone(), TaskStatus::Succeeded.as_str()),
            (ids.run_task.clone(), TaskStatus::Canceled.as_str()),
        ];
        expected.extend(deferred.map(|d| (d.task_id.clone(), TaskStatus::Succeeded.as_str())));
        // Each task settles once: one event each (the deferred one's from its batch's results).
        let missing: Vec<_> = expected
            .iter()
            .filter(|(id, status)| {
                settled.get(id).map(String::as_str) != Some(*status)
                    || events.iter().filter(|(event_id, _)| event_id == id).count() != 1
            })
            .collect();
        if missing.is_empty() {
            self.step(
                "EventsQueue",
                "completion events",
                Ok(format!("{} task.settled event(s)", settled.len())),
            );
        } else {
            self.step(
                "EventsQueue",
                "completion events",
                Err(format!("missing {missing:?}; got {settled:?}")),
            );
        }
    }

    /// Every task message is sent in its application's message group: on a standard queue that
    /// is what SQS fair queues need to keep one tenant's backlog from delaying the others.
    fn check_message_groups(&mut self) {
        let task_queue = self.rehearsal.queues.get("TaskQueue").map(|queue| queue.arn.clone());
        let sends: Vec<_> = self
            .rehearsal
            .proxy
            .calls()
            .into_iter()
            .filter(|call| call.action == "sqs:SendMessage" && Some(&call.resource) == task_queue.as_ref())
            .flat_map(|call| call.message_groups)
            .collect();
        let expected = aitasks_runtime::queue::message_group(TENANT);
        if sends.is_empty() {
            self.step("TaskQueue", "message groups", Err("no task message was sent".into()));
        } else if sends.iter().all(|group| group.as_deref() == Some(expected.as_str())) {
            self.step(
                "TaskQueue",
                "message groups",
                Ok(format!("{} message(s), each in group {expected}", sends.len())),
            );
        } else {
            self.step(
                "TaskQueue",
                "message groups",
                Err(format!("expected every message in group {expected}: {sends:?}")),
            );
        }
    }

    /// The functions with active tracing sent their segments to the daemon, and the scoped task
    /// is one trace: the create's request subsegment and the worker's segment downstream of it
    /// (from another function, after a retried delivery).
    async fn check_traces(&mut self, ids: &Ids) {
        // Segments are sent as spans close; the last ones may still be in flight.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (documents, malformed) = self.rehearsal.xray.received();
        let task = ids.scoped_task.as_str();
        let of_task = |d: &&Value| d["annotations"]["task_id"] == task;
        let create = documents.iter().filter(of_task).find(|d| d["name"] == "POST /v1/tasks");
        let workers: Vec<_> = documents.iter().filter(of_task).filter(|d| d.get("type").is_none()).collect();
        let outcome = match (create, workers.as_slice()) {
            _ if malformed > 0 => Err(format!("{malformed} datagram(s) were not segment documents")),
            (None, _) => {
                Err(format!("no create subsegment for task {task} in {} document(s)", documents.len()))
            }
            (Some(_), []) => Err(format!("no worker segment for task {task}")),
            (Some(create), workers) => {
                let trace = &create["trace_id"];
                if workers.iter().all(|w| &w["trace_id"] == trace) {
                    Ok(format!(
                        "{} segment document(s); the scoped task's create and its {} worker attempt(s) in one trace",
                        documents.len(),
                        workers.len()
                    ))
                } else {
                    Err(format!("the worker left the create's trace {trace}: {workers:?}"))
                }
            }
        };
        self.step("X-Ray", "one trace per task", outcome);
    }

    /// Every provider call carried the key and the credential header from the profile's own
    /// secrets.
    fn check_provider_key(&mut self) {
        let stub = &self.rehearsal.stub;
        let secrets = &self.rehearsal.secrets;
        let expected = format!("Bearer {}", secrets.profile_key);
        let keys = stub.authorizations();
        let headers = stub.header_values(crate::PROFILE_HEADER);
        let outcome = if keys.is_empty() {
            Err("the provider was never called".to_owned())
        } else if !keys.iter().all(|a| a.as_deref() == Some(expected.as_str())) {
            Err("a provider call did not carry the key from the secret".to_owned())
        } else if !headers.iter().all(|h| h.as_deref() == Some(secrets.profile_header.as_str())) {
            Err(format!("a provider call did not carry {} from its secret", crate::PROFILE_HEADER))
        } else {
            Ok(format!(
                "{} call(s), each with the key and the {} header from the profile's own secrets",
                keys.len(),
                crate::PROFILE_HEADER
            ))
        };
        self.step("provider", "API key from the secret", outcome);
    }
}
