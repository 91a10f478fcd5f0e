//! The rehearsal passes on the shipped template, and refuses templates a deploying engineer
//! could get wrong: a permission removed, a secret variable moved to `Globals`, a task queue
//! whose visibility timeout AWS would refuse, a consumed queue without a dead-letter queue, an
//! alarm the documentation promises gone. Needs `make up`
//! and the cargo-lambda release binaries (`make lambda-smoke`); `make rehearse-fast` runs it.

use std::path::PathBuf;

use aitasks_rehearse::report::Report;
use aitasks_rehearse::{scenario, Options, Rehearsal};
use serde_yaml::Value as Yaml;

fn options() -> Options {
    Options::for_checkout(&aitasks_testkit::workspace_root()).expect("the tools (scripts/tools.sh)")
}

/// A copy of template.yaml changed by `edit`, in a temporary file.
fn edited_template(edit: impl FnOnce(&mut Yaml)) -> PathBuf {
    let root = aitasks_testkit::workspace_root();
    let mut template: Yaml =
        serde_yaml::from_str(&std::fs::read_to_string(root.join("template.yaml")).expect("template"))
            .expect("yaml");
    edit(&mut template);
    let path = std::env::temp_dir().join(format!("aitasks-template-{}.yaml", uuid::Uuid::new_v4().simple()));
    std::fs::write(&path, serde_yaml::to_string(&template).expect("yaml")).expect("write the copy");
    path
}

/// The rehearsal's scenario on an edited copy of the template (removed after).
async fn rehearse_edited(template: PathBuf) -> (Rehearsal, Report) {
    let mut options = options();
    options.template = template.clone();
    let rehearsal = Rehearsal::prepare(options).await.expect("the local stack");
    let report = scenario::run(&rehearsal).await;
    rehearsal.cleanup().await;
    let _ = std::fs::remove_file(template);
    (rehearsal, report)
}

#[tokio::test]
async fn the_template_as_deployed_passes_with_every_call_allowed() {
    let rehearsal = Rehearsal::prepare(options()).await.expect("the local stack");
    let report = scenario::run(&rehearsal).await;
    rehearsal.cleanup().await;
    println!("{}", report.render());
    assert!(report.passed(), "{:#?}", report.problems());

    let ran = |label: &str| report.steps.iter().any(|s| s.label.starts_with(label) && s.outcome.is_ok());
    // What the stack promises its operators: each consumed queue's dead letters are watched, and
    // every alarm the documentation names is in the template.
    for (function, queue) in [("ProcessTaskFunction", "TaskQueue"), ("IntakeTaskFunction", "IntakeQueue")] {
        let label = format!("dead-letter queue of {queue}");
        assert!(
            report.steps.iter().any(|s| s.function == function && s.label == label && s.outcome.is_ok()),
            "{function} {label}"
        );
    }
    assert!(ran("alarms the documentation names"));
    // Every function started with its secrets from Secrets Manager, each reading only its own.
    let secrets = &rehearsal.secrets;
    let reads = |function: &str| -> Vec<String> {
        report
            .calls
            .iter()
            .filter(|c| c.function == function && c.action == "secretsmanager:GetSecretValue")
            .map(|c| c.resource.clone())
            .collect()
    };
    for function in ["CreateTaskFunction", "ReleaseDeleteFunction"] {
        assert_eq!(
            reads(function),
            vec![secrets.database_arn.clone()],
            "{function} reads the database secret only"
        );
        assert!(report.cold_starts[function].is_some(), "{function} started");
    }
    // The web console's function (parameter Console) answered its two routes with no token,
    // and made no AWS call at all: no secret, no queue.
    assert!(ran("GET /console (/console)") && ran("GET /console/{proxy+} (/console/js/main.js)"));
    assert!(report.calls.iter().all(|c| c.function != "ConsoleFunction"), "the console calls no AWS API");
    let mut expected = vec![
        secrets.database_arn.clone(),
        secrets.provider_key_arn.clone(),
        secrets.profile_key_arn.clone(),
        secrets.profile_header_arn.clone(),
    ];
    expected.sort();
    // The sweeper's batcher calls the providers' batch APIs with the same keys (worker_from_env).
    for function in ["ProcessTaskFunction", "SweeperFunction"] {
        let mut found = reads(function);
        found.sort();
        assert_eq!(
            found, expected,
            "{function} reads the database secret, the provider key, the profile's own key and its header"
        );
    }
    assert!(ran("API key from the secret"), "the provider saw the key and the header from their secrets");
    assert_eq!(
        reads("MigrateFunction"),
        vec![secrets.owner_arn.clone()],
        "migrate reads the owner's secret only"
    );

    // The triggers ran: every route, the queue, the schedule, the custom resource's three requests.
    for route in &rehearsal.deployment.routes {
        assert!(
            ran(&format!("{} {}", route.method, route.path)),
            "{} {} was exercised",
            route.method,
            route.path
        );
    }
    for label in [
        "event source mapping from TaskQueue",
        "dead-letter queue",
        "SQS delivery",
        "schedule rate(1 minute)",
        "EventBridge rule BatchJobStateRule",
        "Custom::Migrations Create",
        "Custom::Migrations Update",
        "Custom::Migrations Delete",
    ] {
        assert!(ran(label), "{label} ran");
    }
    // A deferred task went through Bedrock batch inference: one job, its one record named by
    // the task id's alphanumeric form, the task succeeded once; each call the sweeper made for
    // it (the records in, the job passing the service role, its status, the results out) was
    // allowed by the template's policy.
    for label in ["Bedrock batch submitted", "Bedrock batch settled", "Bedrock batch calls"] {
        assert!(ran(label), "{label}: {:#?}", report.steps.iter().find(|s| s.label.starts_with(label)));
    }
    assert_eq!((rehearsal.bedrock.creates(), rehearsal.bedrock.bad_signatures()), (1, 0));
    let batch_actions: std::collections::BTreeSet<&str> = report
        .calls
        .iter()
        .filter(|c| c.function == "SweeperFunction" && c.phase.starts_with("Bedrock batch"))
        .map(|c| c.action.as_str())
        .collect();
    for action in [
        "s3:PutObject",
        "s3:GetObject",
        "bedrock:CreateModelInvocationJob",
        "bedrock:GetModelInvocationJob",
        "iam:PassRole",
    ] {
        assert!(batch_actions.contains(action), "{action} was called: {batch_actions:?}");
    }
    // The shipped template follows AWS's advice too (the task queue's visibility is six times
    // process-task's timeout; its reserved concurrency covers the mapping's maximum).
    assert!(report.advice.is_empty(), "{:#?}", report.advice);
    let sends: Vec<_> =
        report.calls.iter().filter(|c| c.action == "sqs:SendMessage").map(|c| c.function.as_str()).collect();
    assert!(sends.contains(&"CreateTaskFunction") && sends.contains(&"ProcessTaskFunction"), "{sends:?}");
    assert!(report.calls.iter().all(|c| c.decision.is_allowed()));
    // The provider's first 503 made process-task requeue and set its message's visibility to
    // the backoff: the retry path's permission was exercised and judged too.
    assert!(
        report
            .calls
            .iter()
            .any(|c| c.function == "ProcessTaskFunction" && c.action == "sqs:ChangeMessageVisibility"),
        "the retry path ran"
    );
}

#[tokio::test]
async fn a_template_with_a_permission_removed_is_refused() {
    let template = edited_template(|t| {
        // create-task loses sqs:SendMessage (it keeps reading its secret).
        let statements = t["Resources"]["CreateTaskFunction"]["Properties"]["Policies"][0]["Statement"]
            .as_sequence_mut()
            .expect("statements");
        statements.retain(|s| s["Action"][0].as_str() != Some("sqs:SendMessage"));
    });
    let (rehearsal, report) = rehearse_edited(template).await;
    assert!(!report.passed());
    let task_queue = &rehearsal.queues["TaskQueue"].arn;
    let problems = report.problems();
    assert!(
        problems.iter().any(|p| p.starts_with("CreateTaskFunction may not call sqs:SendMessage on ")
            && p.contains(task_queue.as_str())),
        "the refused call is named with its function, action and resource: {problems:#?}"
    );
}

/// process-task loses its Step Functions grant: its SendTaskSuccess calls are refused as AWS
/// would refuse them, and the rehearsal names the call.
#[tokio::test]
async fn a_template_without_the_callback_grant_is_refused() {
    let template = edited_template(|t| {
        let statements = t["Resources"]["ProcessTaskFunction"]["Properties"]["Policies"][0]["Statement"]
            .as_sequence_mut()
            .expect("statements");
        statements.retain(|s| !serde_yaml::to_string(s).expect("yaml").contains("states:SendTaskSuccess"));
    });
    let (rehearsal, report) = rehearse_edited(template).await;
    assert!(!report.passed());
    let machine = &rehearsal.workflows.state_machine_arn;
    let problems = report.problems();
    assert!(
        problems.iter().any(|p| p.starts_with("ProcessTaskFunction may not call states:SendTaskSuccess on ")
            && p.contains(machine.as_str())),
        "the refused answer is named with its function, action and state machine: {problems:#?}"
    );
}

/// With the workflow parameters empty, no function may call Step Functions, a durable callback
/// or PutEvents on anything, and there is no intake queue or function.
#[tokio::test]
async fn empty_workflow_parameters_grant_nothing() {
    let mut options = options();
    for parameter in ["CallbackStateMachineArns", "CallbackFunctionArns", "EventBusName", "IntakeAppIds"] {
        options.parameters.insert(parameter.to_owned(), String::new());
    }
    let rehearsal = Rehearsal::prepare(options).await.expect("the local stack");
    rehearsal.cleanup().await;
    assert!(!rehearsal.deployment.functions.contains_key("IntakeTaskFunction"));
    for (logical_id, function) in &rehearsal.deployment.functions {
        for action in
            ["states:SendTaskSuccess", "lambda:SendDurableExecutionCallbackSuccess", "events:PutEvents"]
        {
            for resource in [
                "*",
                "arn:aws:states:us-east-1:123456789012:stateMachine:any",
                "arn:aws:events:us-east-1:123456789012:event-bus/default",
            ] {
                assert!(
                    !aitasks_rehearse::iam::evaluate(&function.statements, action, resource).is_allowed(),
                    "{logical_id} may call {action} on {resource}"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_secret_variable_in_globals_is_refused() {
    let template = edited_template(|t| {
        let variables = &mut t["Resources"]["ProcessTaskFunction"]["Properties"]["Environment"]["Variables"];
        let secret = variables
            .as_mapping_mut()
            .and_then(|m| m.remove("AITASK_PROVIDER_KEY_SECRET_ARN"))
            .expect("process-task names the provider key");
        t["Globals"]["Function"]["Environment"]["Variables"]
            .as_mapping_mut()
            .expect("global variables")
            .insert(Yaml::from("AITASK_PROVIDER_KEY_SECRET_ARN"), secret);
    });
    let (rehearsal, report) = rehearse_edited(template).await;
    assert!(!report.passed());
    let problems = report.problems();
    let key = &rehearsal.secrets.provider_key_arn;
    // The sweeper names the key itself (its own variable wins over the global) and may read it.
    for function in ["CreateTaskFunction", "ReleaseDeleteFunction", "MigrateFunction"] {
        assert!(
            problems
                .iter()
                .any(|p| p
                    .starts_with(&format!("{function} may not call secretsmanager:GetSecretValue on {key}"))),
            "{function}'s refused read of the provider key is named: {problems:#?}"
        );
    }
    assert!(
        problems.iter().any(|p| p.starts_with("CreateTaskFunction cold start")),
        "create-task cannot start: {problems:#?}"
    );
}

/// A new user shortens the task queue's visibility timeout to 60 s, below process-task's 300 s
/// timeout: Lambda refuses to create the event source mapping, so the deploy fails. The
/// rehearsal refuses it before anything runs, naming the queue, the timeout and the rule.
#[tokio::test]
async fn a_queue_that_hides_messages_for_less_than_the_function_runs_is_refused() {
    let template = edited_template(|t| {
        t["Resources"]["TaskQueue"]["Properties"]["VisibilityTimeout"] = Yaml::from(60);
    });
    let (_, report) = rehearse_edited(template).await;
    println!("{}", report.render());
    assert!(!report.passed(), "a visibility timeout below the function's timeout passed");
    let problems = report.problems();
    let refusal = problems
        .iter()
        .find(|p| p.starts_with("ProcessTaskFunction event source mapping from TaskQueue: AWS refuses"))
        .unwrap_or_else(|| panic!("the mapping is refused: {problems:#?}"));
    for named in [
        "TaskQueue's VisibilityTimeout is 60 s",
        "ProcessTaskFunction's Timeout of 300 s",
        "Queue visibility timeout: 60 seconds is less than Function timeout: 300 seconds",
        "must be at least the timeout of the function it triggers",
        "six times the timeout plus the batching window (1800 s)",
    ] {
        assert!(refusal.contains(named), "the refusal says {named:?}: {refusal}");
    }
    assert_eq!(problems.len(), 1, "the refusal is the only problem: {problems:#?}");
    // The stack would roll back: no function ran, no AWS call was made.
    assert!(report.cold_starts.is_empty() && report.calls.is_empty(), "nothing ran");
}

/// The intake queue loses its redrive policy: the stack deploys, and a message intake-task can
/// never take would be delivered again until its retention ends, with no alarm. The rehearsal
/// refuses it before anything runs, naming the queue, its consumer and what to add.
#[tokio::test]
async fn a_consumed_queue_without_a_dead_letter_queue_is_refused() {
    let template = edited_template(|t| {
        let properties = t["Resources"]["IntakeQueue"]["Properties"].as_mapping_mut().expect("properties");
        properties.remove("RedrivePolicy").expect("the shipped intake queue has a redrive policy");
    });
    let (_, report) = rehearse_edited(template).await;
    println!("{}", report.render());
    assert!(!report.passed(), "a consumed queue without a dead-letter queue passed");
    let problems = report.problems();
    assert_eq!(problems.len(), 1, "the refusal is the only problem: {problems:#?}");
    assert!(
        problems[0].starts_with(
            "IntakeTaskFunction dead-letter queue of IntakeQueue: IntakeQueue is consumed by \
             IntakeTaskFunction but has no dead-letter queue"
        ),
        "{problems:#?}"
    );
    assert!(problems[0].contains("RedrivePolicy"), "it says what to add: {}", problems[0]);
    assert!(report.cold_starts.is_empty() && report.calls.is_empty(), "nothing ran");
}

/// An alarm the documentation promises is gone from the template (here the intake DLQ's): refused,
/// naming the alarm and the document that promises it, and the dead-letter queue left unwatched.
#[tokio::test]
async fn a_template_without_an_alarm_the_docs_promise_is_refused() {
    let template = edited_template(|t| {
        let resources = t["Resources"].as_mapping_mut().expect("resources");
        resources.remove("IntakeDeadLetterAlarm").expect("the shipped template has the alarm");
        resources.remove("OldestQueuedTaskAlarm").expect("the shipped template has the alarm");
    });
    let (_, report) = rehearse_edited(template).await;
    println!("{}", report.render());
    assert!(!report.passed(), "a template without promised alarms passed");
    let problems = report.problems();
    let find = |prefix: &str| {
        problems
            .iter()
            .find(|p| p.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix}: {problems:#?}"))
            .clone()
    };
    let promised = find("template alarms the documentation names: ");
    for named in [
        "the documentation promises alarms the template lacks",
        "IntakeDeadLetterAlarm (docs/deploying.md, docs/events.md)",
        "OldestQueuedTaskAlarm (docs/deploying.md, docs/operating.md)",
    ] {
        assert!(promised.contains(named), "the refusal says {named:?}: {promised}");
    }
    let unwatched = find("IntakeTaskFunction dead-letter queue of IntakeQueue: ");
    assert!(unwatched.contains("dead-letter queue IntakeDeadLetterQueue has no alarm"), "{unwatched}");
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(report.cold_starts.is_empty() && report.calls.is_empty(), "nothing ran");
}

/// A new user puts the provider's key in a profile's plain `headers`, which every function gets
/// as plain text: no function starts, and the cold start says which header and what to do.
#[tokio::test]
async fn a_credential_in_a_profile_s_plain_headers_stops_the_start() {
    let mut options = options();
    let models = serde_json::json!({"default": {"model": "rehearsal-model",
        "headers": {"Authorization": "Bearer sk-plain-in-models"}}});
    options.parameters.insert("ModelsJson".to_owned(), models.to_string());
    let rehearsal = Rehearsal::prepare(options).await.expect("the local stack");
    let report = scenario::run(&rehearsal).await;
    rehearsal.cleanup().await;
    assert!(!report.passed());
    let problems = report.problems();
    for function in ["ProcessTaskFunction", "CreateTaskFunction"] {
        let refusal = problems
            .iter()
            .find(|p| p.starts_with(&format!("{function} cold start")))
            .unwrap_or_else(|| panic!("{function} does not start: {problems:#?}"));
        // The error may come quoted (the process's last line is its Debug form).
        let refusal = refusal.replace("\\\"", "\"");
        for named in
            ["header \"Authorization\" looks like a credential", "secretHeaders", "ProfileKeySecretArns"]
        {
            assert!(refusal.contains(named), "the refusal says {named:?}: {refusal}");
        }
        assert!(!refusal.contains("sk-plain-in-models"), "the credential is not repeated: {refusal}");
    }
    assert_eq!(rehearsal.stub.calls(), 0, "no provider call was made");
}

/// Each reserved-concurrency parameter at 0 leaves its function unreserved, as its description
/// says: CloudFormation's `Fn::Equals` compares the parameter's text "0" with the template's 0.
#[tokio::test]
async fn reserved_concurrency_parameters_at_zero_leave_every_function_unreserved() {
    let mut options = options();
    for parameter in [
        "ApiReservedConcurrency",
        "SweeperReservedConcurrency",
        "ProcessTaskReservedConcurrency",
        "MigrateReservedConcurrency",
    ] {
        options.parameters.insert(parameter.to_owned(), "0".to_owned());
    }
    let rehearsal = Rehearsal::prepare(options).await.expect("the local stack");
    rehearsal.cleanup().await;
    for (logical_id, function) in &rehearsal.deployment.functions {
        assert_eq!(function.reserved_concurrency, None, "{logical_id} is unreserved");
    }
}
