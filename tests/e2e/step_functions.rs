//! Step Functions waiting for tasks without polling, on moto's server, which runs the state
//! machines: a `sqs:sendMessage.waitForTaskToken` state sends its task and token to the intake
//! queue, the dev server's intake poller creates the task with the token as its callback, the
//! task runs on the stub provider, and our `SendTaskSuccess` / `SendTaskFailure` ends the wait.
//! The whole stack's SQS is moto's here (the state machine sends where the dev server polls).

use std::time::{Duration, Instant};

use aitasks_testkit::*;
use aws_sdk_sfn::types::ExecutionStatus;
use serde_json::{json, Value};

const APP: &str = "app-sfn";
/// The SenderId moto's SQS gives every message (whoever sent it): here, the state machines'.
const MOTO_SENDER_ID: &str = "AIDAIT2UOQQY3AUEKVGXU";

/// A stack on moto with an intake queue that takes `APP`'s tasks, and a Step Functions client.
struct Flow {
    stack: Stack,
    sfn: aws_sdk_sfn::Client,
    intake: String,
}

impl Flow {
    async fn start(overrides: &[(&str, &str)]) -> Flow {
        Flow::start_for(&[APP, "app-other"], overrides).await
    }

    /// A stack whose intake queue takes these tenants' tasks, each from the state machines.
    async fn start_for(tenants: &[&str], overrides: &[(&str, &str)]) -> Flow {
        Flow::start_with_senders(tenants, tenants, overrides).await
    }

    /// A stack whose intake queue takes these tenants' tasks, and whose state machines (moto's
    /// one sender) may create tasks of `senders_tenants` only.
    async fn start_with_senders(
        tenants: &[&str],
        senders_tenants: &[&str],
        overrides: &[(&str, &str)],
    ) -> Flow {
        let moto = Moto::shared().await;
        let sqs = sqs_at(&moto.endpoint).await;
        let name = format!("intake-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        let intake =
            sqs.create_queue().queue_name(&name).send().await.unwrap().queue_url().unwrap().to_owned();
        let tenants = json!({ &name: tenants }).to_string();
        let senders: Vec<String> = senders_tenants.iter().map(|t| format!("{MOTO_SENDER_ID}={t}")).collect();
        let mut env: Vec<(String, String)> = moto.env(&["SFN"]);
        env.extend([
            ("AITASK_LOCAL_INTAKE_QUEUE_URL".to_owned(), intake.clone()),
            ("AITASK_INTAKE_TENANTS".to_owned(), tenants),
            ("AITASK_INTAKE_SENDERS".to_owned(), senders.join(",")),
            ("AITASK_CALLBACK_HEARTBEAT_MS".to_owned(), "300".to_owned()),
        ]);
        env.extend(overrides.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let stack = Stack::start_with_queues_at(&moto.endpoint, &env).await;
        let sfn = aws_sdk_sfn::Client::new(&moto.sdk_config().await);
        Flow { stack, sfn, intake }
    }

    /// A state machine whose one task state waits for our answer (`extra` joins the state's
    /// fields: HeartbeatSeconds, TimeoutSeconds), then branches on the classification.
    async fn state_machine(&self, queue: &str, extra: Value) -> String {
        self.create_state_machine(self.definition(queue, extra)).await
    }

    fn definition(&self, queue: &str, extra: Value) -> Value {
        let mut wait = json!({
            "Type": "Task",
            "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
            "Parameters": {"QueueUrl": queue, "MessageBody": {"task.$": "$.task", "appId.$": "$.appId", "taskToken.$": "$$.Task.Token"}},
            "ResultPath": "$.answer",
            "Next": "Branch",
        });
        for (key, value) in extra.as_object().unwrap() {
            wait[key] = value.clone();
        }
        json!({
            "StartAt": "Classify",
            "States": {
                "Classify": wait,
                "Branch": {"Type": "Choice",
                           "Choices": [{"Variable": "$.answer.output", "StringEquals": "pos", "Next": "Positive"}],
                           "Default": "Negative"},
                "Positive": {"Type": "Pass", "Result": "positive", "ResultPath": "$.verdict", "End": true},
                "Negative": {"Type": "Pass", "Result": "negative", "ResultPath": "$.verdict", "End": true},
            },
        })
    }

    async fn create_state_machine(&self, definition: Value) -> String {
        let name = format!("classify-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        self.sfn
            .create_state_machine()
            .name(name)
            .definition(definition.to_string())
            .role_arn("arn:aws:iam::123456789012:role/aitasks-e2e")
            .send()
            .await
            .unwrap()
            .state_machine_arn()
            .to_owned()
    }

    async fn start_execution(&self, machine: &str, input: Value) -> String {
        let name = uuid::Uuid::new_v4().simple().to_string();
        let started = self
            .sfn
            .start_execution()
            .state_machine_arn(machine)
            .name(name)
            .input(input.to_string())
            .send()
            .await;
        started.unwrap().execution_arn().to_owned()
    }

    /// Wait until the execution is no longer running (moto runs state machines in Python: a
    /// loaded machine takes its time); its status, output and error.
    async fn finished(&self, execution: &str) -> (ExecutionStatus, Value, Option<String>, Option<String>) {
        let until = Instant::now() + PATIENCE;
        loop {
            let described = self.sfn.describe_execution().execution_arn(execution).send().await.unwrap();
            if described.status() != &ExecutionStatus::Running || Instant::now() >= until {
                let output =
                    described.output().map(|o| serde_json::from_str(o).unwrap()).unwrap_or(Value::Null);
                return (
                    described.status().clone(),
                    output,
                    described.error().map(str::to_owned),
                    described.cause().map(str::to_owned),
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn classify(effect_key: &str) -> Value {
    json!({
        "owner": {"scopeId": "docs"}, "stepKey": "classify", "effectKey": effect_key, "modelId": "default",
        "request": {"kind": "classify", "prompt": "Sentiment?", "input": {"text": "great"}, "choices": ["pos", "neg"]},
    })
}

#[tokio::test]
async fn a_state_machine_waits_for_its_task_through_the_intake_queue_and_branches_on_the_answer() {
    let flow = Flow::start(&[]).await;
    flow.stack.stub.set_default(Reply::Answer(json!({"choice": "pos"})));
    let machine = flow.state_machine(&flow.intake, json!({})).await;
    let execution = flow.start_execution(&machine, json!({"appId": APP, "task": classify("doc-1")})).await;
    let (status, output, error, _) = flow.finished(&execution).await;
    assert_eq!(status, ExecutionStatus::Succeeded, "{error:?} {output}");
    assert_eq!(output["verdict"], "positive", "the workflow branched on our answer: {output}");
    let answer = &output["answer"];
    assert_eq!(
        (answer["status"].as_str(), answer["output"].as_str()),
        (Some("succeeded"), Some("pos")),
        "{answer}"
    );
    assert_eq!(answer["usage"]["model"], "stub-model");
    let task_id = answer["taskId"].as_str().unwrap();
    let (_, task) = flow.stack.api(APP).get(&format!("/v1/tasks/{task_id}")).await;
    assert_eq!(task["effectKey"], "doc-1");
    assert!(
        task.get("callback").is_none() && !task.to_string().contains("taskToken"),
        "no token in an answer: {task}"
    );
    assert_eq!(flow.stack.db.count("SELECT count(*) FROM task_callbacks WHERE state = 'delivered'").await, 1);
}

#[tokio::test]
async fn a_failed_task_or_a_refused_message_fails_the_execution_with_our_code() {
    let flow = Flow::start(&[]).await;
    // The provider refuses every call as a bad request: the task fails, not to be retried.
    flow.stack.stub.set_default(Reply::status(400));
    let machine = flow.state_machine(&flow.intake, json!({})).await;
    let failing = flow.start_execution(&machine, json!({"appId": APP, "task": classify("doc-fails")})).await;
    let mut invalid = classify("doc-invalid");
    invalid.as_object_mut().unwrap().remove("request");
    let refused = flow.start_execution(&machine, json!({"appId": APP, "task": invalid})).await;
    let stranger =
        flow.start_execution(&machine, json!({"appId": "app-stranger", "task": classify("x")})).await;

    // moto (5.2.5) reads only `taskToken` and `error` of a SendTaskFailure (its responses.py
    // drops `cause`), so the execution's cause is empty here: the error is what a workflow
    // branches on; a failure's cause is checked on the durable stub (durable_callbacks.rs).
    let (status, _, error, _) = flow.finished(&failing).await;
    assert_eq!((status, error.as_deref()), (ExecutionStatus::Failed, Some("WORKFLOW_AI_PROVIDER_ERROR")));
    let (status, _, error, _) = flow.finished(&refused).await;
    assert_eq!((status, error.as_deref()), (ExecutionStatus::Failed, Some("INVALID_REQUEST")));
    let (status, _, error, _) = flow.finished(&stranger).await;
    assert_eq!((status, error.as_deref()), (ExecutionStatus::Failed, Some("UNAUTHORIZED")));
    // Neither refused message became a task.
    assert_eq!(flow.stack.db.count("SELECT count(*) FROM tasks").await, 1);
}

/// A state with `HeartbeatSeconds: 2` outlives a task that runs for 5 s because the sweeper
/// heartbeats its token; the same state whose message nobody takes times out at 2 s.
#[tokio::test]
async fn heartbeats_keep_a_short_heartbeat_state_alive_through_a_slow_task() {
    let flow = Flow::start(&[]).await;
    flow.stack
        .stub
        .set_default(Reply::Slow(Duration::from_secs(5), Box::new(Reply::Answer(json!({"choice": "neg"})))));
    let sqs = sqs_at(&Moto::shared().await.endpoint).await;
    let nowhere = format!("nobody-reads-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let nowhere =
        sqs.create_queue().queue_name(nowhere).send().await.unwrap().queue_url().unwrap().to_owned();
    let beating = flow.state_machine(&flow.intake, json!({"HeartbeatSeconds": 2})).await;
    let silent = flow.state_machine(&nowhere, json!({"HeartbeatSeconds": 2})).await;
    let started = Instant::now();
    let slow = flow.start_execution(&beating, json!({"appId": APP, "task": classify("doc-slow")})).await;
    let control = flow.start_execution(&silent, json!({"appId": APP, "task": classify("unread")})).await;

    let (status, _, error, _) = flow.finished(&control).await;
    // AWS names it States.HeartbeatTimeout; moto reports its heartbeat timeouts as States.Timeout.
    // The state has no TimeoutSeconds, and it ended long before the slow task would have.
    assert_eq!(status, ExecutionStatus::Failed);
    assert!(matches!(error.as_deref(), Some("States.HeartbeatTimeout" | "States.Timeout")), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "the silent state timed out on its heartbeat");
    let (status, output, error, _) = flow.finished(&slow).await;
    assert_eq!(status, ExecutionStatus::Succeeded, "{error:?}");
    assert_eq!(output["verdict"], "negative");
    assert!(started.elapsed() >= Duration::from_secs(5), "the task took its 5 s");
}

/// The execution times out while its task waits in the queue (no worker here): the next
/// heartbeat finds the caller gone, records it, makes no more calls, and cancels the task
/// before any provider money is spent.
#[tokio::test]
async fn a_timed_out_execution_stops_our_calls_and_cancels_its_queued_task() {
    let flow = Flow::start(&[("AITASK_LOCAL_POLLERS", "0")]).await;
    let machine = flow.state_machine(&flow.intake, json!({"TimeoutSeconds": 2})).await;
    let execution = flow.start_execution(&machine, json!({"appId": APP, "task": classify("doc-late")})).await;
    let (status, _, error, _) = flow.finished(&execution).await;
    // AWS reports TIMED_OUT; moto reports FAILED, with the same error.
    assert!(matches!(status, ExecutionStatus::TimedOut | ExecutionStatus::Failed), "{status:?}");
    assert_eq!(error.as_deref(), Some("States.Timeout"));

    let api = flow.stack.api(APP);
    let (_, found) = api.get("/v1/tasks?effectKey=doc-late").await;
    let task = api.wait_terminal(found["id"].as_str().unwrap()).await;
    assert_eq!(task["status"], "canceled", "{task}");
    assert!(task["errorMessage"].as_str().unwrap().contains("every caller waiting for it is gone"), "{task}");
    assert_eq!(task["attempts"], 0, "never started");
    assert_eq!(flow.stack.stub.calls(), 0, "no provider call for nobody");
    let db = &flow.stack.db;
    assert_eq!(
        db.count("SELECT count(*) FROM task_callbacks WHERE state = 'gone' AND token IS NULL").await,
        1
    );
    // Gone is final: no more heartbeats and no answer for the cancel.
    let beats = || async {
        let client = db.client().await;
        let row =
            client.query_one("SELECT heartbeat_at::text, tries FROM task_callbacks", &[]).await.unwrap();
        (row.get::<_, String>(0), row.get::<_, i32>(1))
    };
    let before = beats().await;
    // Three more sweeps, each with its heartbeat duty (every 300 ms here): none touches it.
    flow.stack.server.wait_for_sweeps(3).await;
    assert_eq!(beats().await, before);
    assert_eq!(before.1, 0, "no success or failure call was made");
}

/// Being allowed to send to the intake queue is not enough to act as its tenants: the queue
/// takes both tenants' tasks, the state machines' role (moto's one SenderId) is listed for
/// `app-other` only, so its message naming `app-sfn` is refused with `UNAUTHORIZED` (its token
/// failed, no task), and its message naming `app-other` is taken and answered.
#[tokio::test]
async fn an_intake_sender_creates_tasks_only_of_the_tenants_listed_for_it() {
    let flow = Flow::start_with_senders(&[APP, "app-other"], &["app-other"], &[]).await;
    let machine = flow.state_machine(&flow.intake, json!({})).await;
    let posing = flow.start_execution(&machine, json!({"appId": APP, "task": classify("doc-posing")})).await;
    let own =
        flow.start_execution(&machine, json!({"appId": "app-other", "task": classify("doc-own")})).await;

    let (status, _, error, _) = flow.finished(&posing).await;
    println!("a message naming a tenant its sender is not listed for: {status:?} {error:?}");
    assert_eq!((status, error.as_deref()), (ExecutionStatus::Failed, Some("UNAUTHORIZED")));
    let (status, output, error, _) = flow.finished(&own).await;
    println!("a message naming its sender's tenant: {status:?} {error:?}");
    assert_eq!((status, error), (ExecutionStatus::Succeeded, None));
    assert_eq!(output["answer"]["status"], "succeeded", "{output}");
    let db = &flow.stack.db;
    assert_eq!(
        db.count("SELECT count(*) FROM tasks WHERE app_id = 'app-sfn'").await,
        0,
        "no task for the posing one"
    );
    assert_eq!(db.count("SELECT count(*) FROM tasks WHERE app_id = 'app-other'").await, 1);
}

/// A sender cannot probe which tenants a queue takes: a message naming a tenant the queue does
/// not take, one naming a tenant it takes but that its sender is not listed for, and one naming
/// none on a queue of several tenants fail their tokens with the same `UNAUTHORIZED` cause.
/// moto drops a failure's cause, so the tokens here are answered by the Step Functions stand-in,
/// and the messages are sent straight to the intake queue (moto's SQS, its one SenderId).
#[tokio::test]
async fn every_unauthorized_intake_message_fails_its_token_with_the_same_cause() {
    let sfn = SfnStub::start().await;
    let flow = Flow::start_with_senders(
        &[APP, "app-other"],
        &["app-other"],
        &[("AWS_ENDPOINT_URL_SFN", sfn.endpoint.as_str())],
    )
    .await;
    let sqs = sqs_at(&Moto::shared().await.endpoint).await;
    let messages = [
        ("tok-unknown-tenant", json!("app-stranger")),
        ("tok-unlisted-sender", json!(APP)),
        ("tok-no-tenant-named", Value::Null),
    ];
    for (token, app_id) in &messages {
        let body = json!({"appId": app_id, "task": classify(token), "taskToken": token});
        sqs.send_message().queue_url(&flow.intake).message_body(body.to_string()).send().await.unwrap();
    }
    let failures = wait_for("every refused message's token failed", || {
        let failures: Vec<SfnCall> =
            sfn.calls().into_iter().filter(|call| call.action == "SendTaskFailure").collect();
        std::future::ready((failures.len() >= messages.len()).then_some(failures))
    })
    .await;
    let cause_of = |token: &str| {
        let call = failures.iter().find(|call| call.token == token).expect("the token was failed");
        assert_eq!(call.error.as_deref(), Some("UNAUTHORIZED"), "{call:?}");
        call.cause.clone().expect("a cause")
    };
    let causes: Vec<String> = messages.iter().map(|(token, _)| cause_of(token)).collect();
    for (cause, (token, _)) in causes.iter().zip(&messages) {
        println!("{token}: {cause}");
    }
    assert!(causes.iter().all(|cause| cause == &causes[0]), "the causes tell the refusals apart");
    let queue_name = flow.intake.rsplit('/').next().unwrap();
    for named in ["app-stranger", APP, "app-other", queue_name] {
        assert!(!causes[0].contains(named), "the cause names {named}: {}", causes[0]);
    }
    assert_eq!(flow.stack.db.count("SELECT count(*) FROM tasks").await, 0, "no message became a task");
}

/// A poller counts as a caller: one service creates a task without a callback (it reads the
/// task), a workflow creates it again by the same effect key with its token, and that workflow
/// times out. The heartbeat finds the token gone and records it, and the task stays queued for
/// the service still waiting for it (no worker here), instead of ending `canceled` under it.
#[tokio::test]
async fn a_task_a_service_polls_is_not_canceled_when_the_workflow_also_waiting_is_gone() {
    let flow = Flow::start(&[("AITASK_LOCAL_POLLERS", "0")]).await;
    let api = flow.stack.api(APP);
    let (status, created) = api.post("/v1/tasks", &classify("doc-polled")).await;
    assert_eq!(status, 201, "{created}");
    let machine = flow.state_machine(&flow.intake, json!({"TimeoutSeconds": 2})).await;
    let execution =
        flow.start_execution(&machine, json!({"appId": APP, "task": classify("doc-polled")})).await;
    let (status, _, error, _) = flow.finished(&execution).await;
    assert!(matches!(status, ExecutionStatus::TimedOut | ExecutionStatus::Failed), "{status:?}");
    assert_eq!(error.as_deref(), Some("States.Timeout"));

    let db = &flow.stack.db;
    wait_until("the heartbeat to find the token gone", || async {
        db.count("SELECT count(*) FROM task_callbacks WHERE state = 'gone'").await > 0
    })
    .await;
    // The sweep that recorded it would cancel in the same pass; and three more sweeps.
    flow.stack.server.wait_for_sweeps(3).await;
    let (_, task) = api.get(&format!("/v1/tasks/{}", created["id"].as_str().unwrap())).await;
    println!("after the workflow's token was gone: {} {}", task["status"], task["errorMessage"]);
    assert_eq!(task["status"], "queued", "the service polling it still waits: {task}");
    assert_eq!(task["errorCode"], Value::Null, "{task}");
}

/// docs/workflows.md's example (examples/step-functions/classify-document.asl.json), as written, on
/// a one-tenant intake queue: the document is classified and routed on the answer; a canceled task
/// ends the execution in its `CANCELED` state.
#[tokio::test]
async fn the_readme_example_state_machine_classifies_and_routes_a_document() {
    let flow = Flow::start_for(&[APP], &[]).await;
    flow.stack.stub.set_default(Reply::Answer(json!({"choice": "invoice"})));
    let asl =
        std::fs::read_to_string(workspace_root().join("examples/step-functions/classify-document.asl.json"))
            .unwrap()
            .replace("${IntakeQueueUrl}", &flow.intake);
    let machine = flow.create_state_machine(serde_json::from_str(&asl).unwrap()).await;
    let input = json!({"documentId": "doc-9", "text": "Invoice 12: three widgets, 42 EUR."});
    let execution = flow.start_execution(&machine, input).await;
    let (status, output, error, cause) = flow.finished(&execution).await;
    assert_eq!(status, ExecutionStatus::Succeeded, "{error:?} {cause:?} {output}");
    assert_eq!(output["route"], "invoice", "{output}");
    assert_eq!(output["classification"]["status"], "succeeded");
    let (_, task) = flow.stack.api(APP).get("/v1/tasks?effectKey=doc-9/classify").await;
    assert_eq!(task["output"], "invoice", "{task}");

    // A task canceled while it runs: the workflow's Catch on CANCELED ends it there.
    flow.stack.stub.set_default(Reply::Slow(Duration::from_secs(60), Box::new(Reply::Auto)));
    let input = json!({"documentId": "doc-10", "text": "Anything."});
    let execution = flow.start_execution(&machine, input).await;
    let api = flow.stack.api(APP);
    let task = wait_for("the task to start", || async {
        let (status, task) = api.get("/v1/tasks?effectKey=doc-10/classify").await;
        (status == 200 && task["status"] == "running").then_some(task)
    })
    .await;
    api.post(&format!("/v1/tasks/{}/cancel", task["id"].as_str().unwrap()), &json!({})).await;
    let (status, _, error, _) = flow.finished(&execution).await;
    assert_eq!((status, error.as_deref()), (ExecutionStatus::Failed, Some("CANCELED")));
}
