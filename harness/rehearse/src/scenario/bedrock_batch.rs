//! A deferred task through Bedrock batch inference, end to end on the stack's own settings: the
//! task is created through create-task on the batching profile ([`crate::BATCH_PROFILE`]); a
//! sweep forms its batch and submits it (the records to the batch bucket, the job passing the
//! batch service role); Bedrock's stub runs the job; its state change, delivered through the
//! stack's EventBridge rule as AWS would, wakes the sweeper, which reads the results and settles
//! the task at once (the stack's one-minute poll is the fallback for a missed event). Each of
//! those calls goes through the proxy and is judged on the sweeper's own policy.

use std::time::{Duration, Instant};

use aitasks_contracts::TaskStatus;
use serde_json::json;

use super::Scenario;

const SWEEPER: &str = "SweeperFunction";
const LABEL: &str = "Bedrock batch";
/// The job-state event makes the batch due for the sweep it starts; the schedule's sweeps that
/// follow are given a little while more.
const SETTLE_WITHIN: Duration = Duration::from_secs(20);
const SWEEP_EVERY: Duration = Duration::from_secs(2);

/// A deferred task whose batch the provider has.
pub(super) struct DeferredBatch {
    pub(super) task_id: String,
    submitted_at: Instant,
}

/// The IAM actions a Bedrock batch needs of the sweeper, each of which must have been allowed.
const BATCH_ACTIONS: [&str; 6] = [
    "s3:PutObject",
    "s3:ListBucket",
    "s3:GetObject",
    "bedrock:CreateModelInvocationJob",
    "bedrock:GetModelInvocationJob",
    "iam:PassRole",
];

impl Scenario<'_> {
    /// One sweep, with the event the stack's schedule sends the sweeper.
    async fn sweep(&mut self, label: &str) -> Option<serde_json::Value> {
        let schedule = self.rehearsal.deployment.schedules.iter().find(|s| s.function == SWEEPER);
        let Some(event) = schedule.map(|s| s.input.clone()) else {
            self.step(SWEEPER, label, Err("the stack schedules no sweep".to_owned()));
            return None;
        };
        self.invoke(SWEEPER, label, event).await
    }

    /// Create the deferred task and sweep until its batch is submitted; the job then runs (the
    /// stub moves it to `Completed`, its results written to the bucket).
    pub(super) async fn submit_deferred_batch(&mut self) -> Option<DeferredBatch> {
        let created = self
            .http(
                "POST",
                "/v1/tasks",
                "/v1/tasks",
                &[],
                Some(json!({
                    "owner": {"scopeId": "nightly"}, "stepKey": "triage", "effectKey": "rehearsal/deferred",
                    "modelId": crate::BATCH_PROFILE, "delivery": {"deferred": {"within": "PT2H"}},
                    "request": {"kind": "classify", "prompt": "Route the ticket.", "input": {"text": "Refund?"},
                                "choices": ["billing", "bug", "other"]}})),
                201,
            )
            .await?;
        let task_id = created["id"].as_str()?.to_owned();
        if !created["deferredBy"].is_string() {
            self.step("CreateTaskFunction", LABEL, Err(format!("not a deferred task: {created}")));
            return None;
        }
        // The batch forms once its oldest task has waited batch.maxWaitSeconds (1 s).
        let rehearsal = self.rehearsal;
        let bedrock = &rehearsal.bedrock;
        for _ in 0..5 {
            tokio::time::sleep(Duration::from_millis(1100)).await;
            self.sweep(&format!("{LABEL}: form and submit")).await?;
            if bedrock.creates() > 0 {
                break;
            }
        }
        let (creates, records) = (bedrock.creates(), bedrock.records());
        let record_id = uuid::Uuid::parse_str(&task_id).map(|id| id.simple().to_string()).unwrap_or_default();
        if creates != 1 || records.len() != 1 || records[0].0 != record_id {
            let ids: Vec<&String> = records.iter().map(|(id, _)| id).collect();
            let problem = format!(
                "expected one job of the task's one record {record_id}: {creates} job(s), records {ids:?}"
            );
            self.step(SWEEPER, &format!("{LABEL} submitted"), Err(problem));
            return None;
        }
        self.step(SWEEPER, &format!("{LABEL} submitted"), Ok("one job, one record".to_owned()));
        // Bedrock runs the job meanwhile: Submitted, InProgress, Completed with its output.
        bedrock.advance().await;
        bedrock.advance().await;
        Some(DeferredBatch { task_id, submitted_at: Instant::now() })
    }

    /// Sweep (as the schedule does) until the batch's results settle the task; it succeeded on
    /// its one attempt, its job was created once, and every call of the batch was allowed.
    pub(super) async fn settle_deferred_batch(&mut self, batch: &DeferredBatch) {
        let path = format!("/v1/tasks/{}", batch.task_id);
        let mut task;
        // EventBridge delivers the job's state change through the stack's rule for it.
        let rule = self.rehearsal.deployment.event_rules.iter().find(|rule| {
            rule.function == SWEEPER && rule.pattern["source"][0] == "aws.bedrock" && rule.permitted
        });
        let (Some(rule), Some(job)) = (rule.cloned(), self.rehearsal.bedrock.job_arns().pop()) else {
            self.step(
                SWEEPER,
                &format!("{LABEL}: job state change"),
                Err("no permitted rule sends Bedrock's job state changes to the sweeper, or no job"
                    .to_owned()),
            );
            return;
        };
        let event = crate::events::rule_event(&rule, &job, "Completed");
        if self.invoke(SWEEPER, &format!("{LABEL}: job state change"), event).await.is_none() {
            return;
        }
        loop {
            task = self.http("GET", "/v1/tasks/{taskId}", &path, &[], None, 200).await;
            let open = [TaskStatus::Queued.as_str(), TaskStatus::Running.as_str()];
            if task.as_ref().is_some_and(|t| !open.iter().any(|s| t["status"] == *s))
                || batch.submitted_at.elapsed() >= SETTLE_WITHIN
            {
                break;
            }
            tokio::time::sleep(SWEEP_EVERY).await;
            if self.sweep(&format!("{LABEL}: look")).await.is_none() {
                return;
            }
        }
        let creates = self.rehearsal.bedrock.creates();
        let outcome = match task {
            None => Err("the task could not be read".to_owned()),
            Some(task) if task["status"] != TaskStatus::Succeeded.as_str() => {
                Err(format!("ended {} within {SETTLE_WITHIN:?}: {task}", task["status"]))
            }
            Some(task) if task["attempts"] != 1 || creates != 1 => {
                Err(format!("expected one attempt and one job, got {creates} job(s): {task}"))
            }
            Some(task) => Ok(format!("succeeded from the batch: {}", task["output"])),
        };
        self.step(SWEEPER, &format!("{LABEL} settled"), outcome);
        self.check_batch_calls();
    }

    /// Each call a Bedrock batch needs was made by the sweeper during the batch's sweeps, and
    /// allowed.
    fn check_batch_calls(&mut self) {
        let calls = self.rehearsal.proxy.calls();
        let ours: Vec<_> =
            calls.iter().filter(|c| c.function == SWEEPER && c.phase.starts_with(LABEL)).collect();
        let missing: Vec<&str> =
            BATCH_ACTIONS.into_iter().filter(|action| !ours.iter().any(|c| c.action == *action)).collect();
        let refused: Vec<String> = ours
            .iter()
            .filter(|c| !c.decision.is_allowed())
            .map(|c| format!("{} on {}", c.action, c.resource))
            .collect();
        let outcome = if !missing.is_empty() {
            Err(format!("the batch never called {missing:?}"))
        } else if !refused.is_empty() {
            Err(format!("refused: {refused:?}"))
        } else {
            Ok(format!("{} call(s), each allowed: {}", ours.len(), BATCH_ACTIONS.join(", ")))
        };
        self.step(SWEEPER, &format!("{LABEL} calls"), outcome);
    }
}
