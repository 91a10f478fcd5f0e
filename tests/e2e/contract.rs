//! The documents hold what the code does: every OpenAPI operation is a route the handlers
//! serve (answering only documented statuses), the SAM template routes exactly those
//! operations to the right functions, and the template has what the linters cannot check.

use std::collections::BTreeSet;

use aitasks_testkit::*;
use serde_json::json;
use serde_yaml::Value as Yaml;

fn load(file: &str) -> Yaml {
    let text = std::fs::read_to_string(workspace_root().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn openapi_operations() -> BTreeSet<(String, String)> {
    let spec = load("openapi.yaml");
    let mut operations = BTreeSet::new();
    for (path, item) in spec["paths"].as_mapping().expect("paths") {
        for (method, _) in item.as_mapping().expect("path item") {
            operations.insert((
                method.as_str().expect("method").to_uppercase(),
                path.as_str().expect("path").to_owned(),
            ));
        }
    }
    operations
}

/// `(METHOD, path) → function` for every HttpApi event in the template.
fn template_routes() -> BTreeSet<(String, String, String)> {
    let template = load("template.yaml");
    let mut routes = BTreeSet::new();
    for (name, resource) in template["Resources"].as_mapping().expect("resources") {
        let Some(events) = resource["Properties"]["Events"].as_mapping() else { continue };
        // The web console's files are not the API (the_console_alone_needs_no_token).
        if name.as_str() == Some("ConsoleFunction") {
            continue;
        }
        for (_, event) in events {
            if event["Type"].as_str() == Some("HttpApi") {
                routes.insert((
                    event["Properties"]["Method"].as_str().expect("method").to_owned(),
                    event["Properties"]["Path"].as_str().expect("path").to_owned(),
                    name.as_str().expect("name").to_owned(),
                ));
            }
        }
    }
    routes
}

#[tokio::test]
async fn every_documented_operation_is_served_and_routed() {
    let operations = openapi_operations();
    // Seventeen, four of holds, six of replays and operations, one of live output, two of
    // pictures (a run's progress, the activity).
    assert_eq!(operations.len(), 17 + 4 + 6 + 1 + 2, "the thirty routes of docs/api.md");
    let routed: BTreeSet<(String, String)> =
        template_routes().into_iter().filter(|(m, _, _)| m != "ANY").map(|(m, p, _)| (m, p)).collect();
    assert_eq!(routed, operations, "template.yaml routes exactly the documented operations");
    // Each documented path also has an ANY route to the same function, so a wrong method is
    // the function's 405 rather than API Gateway's 404.
    let paths: BTreeSet<String> = operations.iter().map(|(_, path)| path.clone()).collect();
    let any: BTreeSet<String> =
        template_routes().into_iter().filter(|(m, _, _)| m == "ANY").map(|(_, p, _)| p).collect();
    assert_eq!(any, paths, "an ANY route on every documented path, and on nothing else");
    for (method, path, function) in template_routes() {
        let release_delete = path == "/v1/tasks/release"
            || path.starts_with("/v1/scopes/")
            || path == "/v1/unreleased-sources";
        let expected = if release_delete { "ReleaseDeleteFunction" } else { "CreateTaskFunction" };
        assert_eq!(function, expected, "{method} {path}");
    }

    let stack = Stack::start().await;
    let api = stack.api("contract-app");
    let spec = load("openapi.yaml");
    for (method, path) in &operations {
        let concrete = path
            .replace("{runId}", &uuid::Uuid::new_v4().to_string())
            .replace("{taskId}", &uuid::Uuid::new_v4().to_string())
            .replace("{holdId}", &uuid::Uuid::new_v4().to_string())
            .replace("{operationId}", &uuid::Uuid::new_v4().to_string())
            .replace("{scopeId}", "scope-1");
        let body = (method == "POST").then(|| json!({}).to_string().into_bytes());
        let answer = api.send(method.parse().expect("method"), &concrete, body).await;
        assert_ne!(answer.body["error"]["message"], "no such route", "{method} {path} is not served");
        let documented = &spec["paths"][path.as_str()][method.to_lowercase().as_str()]["responses"];
        assert!(
            documented.get(answer.status.to_string().as_str()).is_some(),
            "{method} {path} answered {} which is not documented: {}",
            answer.status,
            answer.body
        );
    }
    // A documented path with a method it does not take is a 405 naming the ones it does; the
    // methods named are exactly the documented ones.
    let task = format!("/v1/tasks/{}", uuid::Uuid::new_v4());
    let progress = format!("/v1/runs/{}/progress", uuid::Uuid::new_v4());
    for (method, path, template) in [
        ("PUT", "/v1/tasks", "/v1/tasks"),
        ("DELETE", "/v1/runs", "/v1/runs"),
        ("GET", "/v1/tasks/batch", "/v1/tasks/batch"),
        ("GET", "/v1/tasks/release", "/v1/tasks/release"),
        ("PATCH", "/v1/scopes/s/tasks", "/v1/scopes/{scopeId}/tasks"),
        ("DELETE", task.as_str(), "/v1/tasks/{taskId}"),
        ("POST", "/v1/unreleased-sources", "/v1/unreleased-sources"),
        ("POST", "/v1/summary", "/v1/summary"),
        ("POST", "/v1/activity", "/v1/activity"),
        ("DELETE", &progress, "/v1/runs/{runId}/progress"),
    ] {
        let answer = api.send(method.parse().expect("method"), path, None).await;
        assert_eq!(
            (answer.status, answer.body["error"]["code"].as_str()),
            (405, Some("METHOD_NOT_ALLOWED")),
            "{method} {path}: {}",
            answer.body
        );
        let mut documented: Vec<String> =
            operations.iter().filter(|(_, p)| p == template).map(|(m, _)| m.clone()).collect();
        documented.sort();
        assert_eq!(answer.header("allow"), Some(documented.join(", ")), "{method} {path}");
    }
    // And what is not documented is not served.
    for (method, path) in [("GET", "/v2/tasks"), ("GET", "/v1/tasks/a/b/c"), ("POST", "/v1")] {
        let answer = api.send(method.parse().expect("method"), path, None).await;
        assert_eq!(
            (answer.status, answer.body["error"]["message"].as_str()),
            (404, Some("no such route")),
            "{method} {path}"
        );
    }
}

/// Actions that IAM authorizes on no resource narrower than "*".
const STAR_ONLY_ACTIONS: [&str; 1] = ["bedrock:ListModelInvocationJobs"];

fn actions(function: &Yaml) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for policy in function["Properties"]["Policies"].as_sequence().into_iter().flatten() {
        for statement in policy["Statement"].as_sequence().into_iter().flatten() {
            // A statement under a condition (`Fn::If: [condition, statement, AWS::NoValue]`)
            // counts as the statement it grants when the condition holds.
            let statement = match statement["Fn::If"].as_sequence() {
                Some(branches) => &branches[1],
                None => statement,
            };
            assert_eq!(statement["Effect"].as_str(), Some("Allow"));
            for action in statement["Action"].as_sequence().expect("actions") {
                found.insert(action.as_str().expect("action").to_owned());
            }
            let resources = match &statement["Resource"] {
                Yaml::Sequence(list) => list.clone(),
                one => vec![one.clone()],
            };
            // "*" only where IAM scopes the action to nothing narrower (a list action), and
            // then for those actions alone.
            if resources.iter().any(|resource| resource.as_str() == Some("*")) {
                for action in statement["Action"].as_sequence().expect("actions") {
                    let action = action.as_str().expect("action");
                    assert!(STAR_ONLY_ACTIONS.contains(&action), "no wildcard resources: {action} on *");
                }
            }
        }
    }
    found
}

#[test]
fn the_template_holds_what_the_linters_miss() {
    let template = load("template.yaml");
    let resources = &template["Resources"];
    let globals = &template["Globals"]["Function"];
    assert_eq!(globals["Runtime"].as_str(), Some("provided.al2023"));
    assert_eq!(globals["Architectures"][0].as_str(), Some("arm64"));
    assert_eq!(globals["LoggingConfig"]["LogFormat"].as_str(), Some("JSON"));
    let environment = globals["Environment"]["Variables"].as_mapping().expect("variables");
    for secret in ["DATABASE_URL", "OPENAI_API_KEY", "PGPASSWORD"] {
        assert!(
            !environment.contains_key(secret),
            "{secret} must come from Secrets Manager, not the environment"
        );
    }
    assert!(environment.contains_key("AITASK_DATABASE_SECRET_ARN"));

    for (function, binary) in [
        ("CreateTaskFunction", "create-task"),
        ("ProcessTaskFunction", "process-task"),
        ("SweeperFunction", "sweeper"),
        ("ReleaseDeleteFunction", "release-delete"),
        ("MigrateFunction", "migrate"),
        ("IntakeTaskFunction", "intake-task"),
    ] {
        let metadata = &resources[function]["Metadata"];
        assert_eq!(metadata["BuildMethod"].as_str(), Some("rust-cargolambda"), "{function}");
        assert_eq!(metadata["BuildProperties"]["Binary"].as_str(), Some(binary), "{function}");
    }

    let process = &resources["ProcessTaskFunction"];
    let sqs = &process["Properties"]["Events"]["Tasks"];
    assert_eq!(sqs["Type"].as_str(), Some("SQS"));
    assert_eq!(sqs["Properties"]["FunctionResponseTypes"][0].as_str(), Some("ReportBatchItemFailures"));
    assert!(sqs["Properties"]["BatchSize"].as_u64().is_some_and(|n| n <= 10));
    let timeout = process["Properties"]["Timeout"].as_u64().expect("timeout");
    let queue = &resources["TaskQueue"]["Properties"];
    assert!(
        queue["VisibilityTimeout"].as_u64().expect("visibility") >= 6 * timeout,
        "visibility at least six times the function timeout (AWS's advice for SQS event sources)"
    );
    let max_receive = queue["RedrivePolicy"]["maxReceiveCount"].as_u64().expect("redrive");
    let max_attempts = template["Parameters"]["MaxAttempts"]["MaxValue"].as_u64().expect("attempt budget");
    assert!(
        max_receive > max_attempts,
        "maxReceiveCount {max_receive} above the attempt budget {max_attempts}"
    );
    assert_eq!(
        queue["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0].as_str(),
        Some("TaskDeadLetterQueue")
    );

    let schedule = &resources["SweeperFunction"]["Properties"]["Events"]["EveryMinute"];
    assert_eq!(schedule["Properties"]["ScheduleExpression"].as_str(), Some("rate(1 minute)"));
    assert!(resources["HttpApi"]["Properties"]["Auth"]["Authorizers"]["Jwt"]["JwtConfiguration"]["issuer"]
        .is_mapping());
    assert_eq!(resources["Migrations"]["Type"].as_str(), Some("Custom::Migrations"));
    for alarm in [
        "DeadLetterDepthAlarm",
        "OldestTaskMessageAlarm",
        "OldestEventMessageAlarm",
        "Api5xxAlarm",
        "CreateTaskErrorsAlarm",
        "CreateTaskThrottlesAlarm",
        "ReleaseDeleteErrorsAlarm",
        "ReleaseDeleteThrottlesAlarm",
        "ProcessTaskErrorsAlarm",
        "ProcessTaskThrottlesAlarm",
        "SweeperErrorsAlarm",
        "SweeperThrottlesAlarm",
        "FailedTasksAlarm",
        "OldestQueuedTaskAlarm",
        "DeferredDeadlineAlarm",
    ] {
        assert_eq!(resources[alarm]["Type"].as_str(), Some("AWS::CloudWatch::Alarm"), "{alarm}");
    }
    // The alarms on the functions' own metrics name a metric and dimension set the code writes
    // (worker.rs: Settlements by Outcome; the sweeper's backlog: no dimensions).
    for (alarm, metric, dimensions) in [
        ("FailedTasksAlarm", "Settlements", 1),
        ("OldestQueuedTaskAlarm", "OldestQueuedAgeMs", 0),
        ("DeferredDeadlineAlarm", "DeferredWindowLeftMs", 0),
    ] {
        let properties = &resources[alarm]["Properties"];
        assert_eq!(properties["MetricName"].as_str(), Some(metric), "{alarm}");
        let named = properties["Dimensions"].as_sequence().map(Vec::len).unwrap_or(0);
        assert_eq!(named, dimensions, "{alarm}: the dimension set the metric is written with");
    }
    // Only process-task may read the provider key, so only it is told where the key is.
    assert!(!environment.contains_key("AITASK_PROVIDER_KEY_SECRET_ARN"), "the provider key is not global");
    assert_eq!(
        process["Properties"]["Environment"]["Variables"]["AITASK_PROVIDER_KEY_SECRET_ARN"]["Ref"].as_str(),
        Some("ProviderKeySecretArn")
    );
    // Every function logs to a log group of the stack with a retention; the API logs access.
    for (function, group) in [
        ("CreateTaskFunction", "CreateTaskLogGroup"),
        ("ReleaseDeleteFunction", "ReleaseDeleteLogGroup"),
        ("ProcessTaskFunction", "ProcessTaskLogGroup"),
        ("SweeperFunction", "SweeperLogGroup"),
        ("MigrateFunction", "MigrateLogGroup"),
        ("IntakeTaskFunction", "IntakeTaskLogGroup"),
    ] {
        assert_eq!(
            resources[function]["Properties"]["LoggingConfig"]["LogGroup"]["Ref"].as_str(),
            Some(group),
            "{function}"
        );
        assert!(resources[group]["Properties"]["RetentionInDays"].is_mapping(), "{group} has a retention");
    }
    let http_api = &resources["HttpApi"]["Properties"];
    assert!(http_api["AccessLogSettings"]["DestinationArn"].is_mapping(), "access logs");
    assert!(http_api["DefaultRouteSettings"]["ThrottlingRateLimit"].is_mapping(), "stage throttling");
    for function in ["CreateTaskFunction", "ReleaseDeleteFunction", "SweeperFunction"] {
        assert!(
            resources[function]["Properties"]["ReservedConcurrentExecutions"].is_mapping(),
            "{function} has reserved concurrency"
        );
    }
    assert_eq!(globals["Tracing"].as_str(), Some("Active"));
    let service_timeout =
        resources["Migrations"]["Properties"]["ServiceTimeout"].as_u64().expect("ServiceTimeout");
    let migrate_timeout = resources["MigrateFunction"]["Properties"]["Timeout"].as_u64().expect("timeout");
    assert!(
        service_timeout > migrate_timeout && service_timeout < 3600,
        "CloudFormation stops waiting soon after the function's own timeout"
    );

    // The dashboard reads the metrics the functions write, in the namespace they are told.
    assert!(
        globals["Environment"]["Variables"]["AITASK_METRICS_NAMESPACE"].is_mapping(),
        "metrics namespace"
    );
    let dashboard = serde_yaml::to_string(&resources["Dashboard"]).expect("a dashboard");
    for metric in [
        "Requests",
        "LatencyMs",
        "Settlements",
        "Retries",
        "ProviderLatencyMs",
        "InputTokens",
        "OutputTokens",
        "StaleRequeued",
        "MessagesRestored",
        "EstimatedCostUSD",
        "QueuedTasks",
        "RunningTasks",
        "TaskQueueMessages",
        "OldestQueuedAgeMs",
        "OldestRunningAgeMs",
        "ProviderThrottled",
        "DeferredWaiting",
        "BatchesSubmitted",
        "BatchesCompleted",
        "BatchesFailed",
        "DeferredSentNow",
        "DeferredWindowLeftMs",
        "{aitasks/${AWS::StackName},Result}",
    ] {
        assert!(dashboard.contains(metric), "the dashboard shows {metric}");
    }

    // Least privilege: each function gets exactly the actions its code uses.
    // Every function that ends tasks or answers callbacks may answer them and put events on the
    // bus, each under its parameter (callback_grants_exist_only_for_what_the_parameters_name).
    const CALLBACKS: [&str; 7] = [
        "events:PutEvents",
        "lambda:SendDurableExecutionCallbackFailure",
        "lambda:SendDurableExecutionCallbackHeartbeat",
        "lambda:SendDurableExecutionCallbackSuccess",
        "states:SendTaskFailure",
        "states:SendTaskHeartbeat",
        "states:SendTaskSuccess",
    ];
    let with_callbacks =
        |own: &[&'static str]| -> Vec<&'static str> { own.iter().copied().chain(CALLBACKS).collect() };
    let expected: [(&str, Vec<&str>); 6] = [
        ("CreateTaskFunction", with_callbacks(&["secretsmanager:GetSecretValue", "sqs:SendMessage"])),
        ("ReleaseDeleteFunction", vec!["secretsmanager:GetSecretValue"]),
        (
            "ProcessTaskFunction",
            with_callbacks(&[
                "bedrock:InvokeModel",
                "bedrock:InvokeModelWithResponseStream",
                "secretsmanager:GetSecretValue",
                "sqs:ChangeMessageVisibility",
                "sqs:DeleteMessage",
                "sqs:GetQueueAttributes",
                "sqs:ReceiveMessage",
                "sqs:SendMessage",
            ]),
        ),
        // GetQueueAttributes: the task queue's counts, to find lost messages (docs/lifecycle.md).
        // The batcher (deferred tasks): the batch bucket, Bedrock's batch jobs and the service
        // role passed to them, each under HasBedrockBatch.
        (
            "SweeperFunction",
            with_callbacks(&[
                "bedrock:CreateModelInvocationJob",
                "bedrock:GetModelInvocationJob",
                "bedrock:StopModelInvocationJob",
                "bedrock:ListModelInvocationJobs",
                "iam:PassRole",
                "s3:GetObject",
                "s3:ListBucket",
                "s3:PutObject",
                "secretsmanager:GetSecretValue",
                "sqs:GetQueueAttributes",
                "sqs:SendMessage",
            ]),
        ),
        ("MigrateFunction", vec!["secretsmanager:GetSecretValue"]),
        (
            "IntakeTaskFunction",
            with_callbacks(&[
                "secretsmanager:GetSecretValue",
                "sqs:ChangeMessageVisibility",
                "sqs:DeleteMessage",
                "sqs:GetQueueAttributes",
                "sqs:ReceiveMessage",
                "sqs:SendMessage",
            ]),
        ),
    ];
    // Migrations run as the schema owner; every other function only as the row-level role.
    let migrate = &resources["MigrateFunction"]["Properties"];
    assert_eq!(
        migrate["Environment"]["Variables"]["AITASK_DATABASE_SECRET_ARN"]["Ref"].as_str(),
        Some("DatabaseOwnerSecretArn")
    );
    for function in [
        "CreateTaskFunction",
        "ProcessTaskFunction",
        "SweeperFunction",
        "ReleaseDeleteFunction",
        "IntakeTaskFunction",
    ] {
        let policies = serde_yaml::to_string(&resources[function]["Properties"]["Policies"]).expect("yaml");
        assert!(!policies.contains("DatabaseOwnerSecretArn"), "{function} must not read the owner's secret");
    }
    // Bedrock: only the models the deployment names (BedrockModelArns), nothing by default.
    let process_policies =
        serde_yaml::to_string(&resources["ProcessTaskFunction"]["Properties"]["Policies"]).unwrap();
    assert!(
        process_policies.contains("BedrockModelArns")
            && process_policies.contains("foundation-model/none-configured"),
        "bedrock:InvokeModel(WithResponseStream) is scoped to the configured models"
    );
    for (function, allowed) in expected {
        let found = actions(&resources[function]);
        let allowed: BTreeSet<String> = allowed.iter().map(|a| (*a).to_owned()).collect();
        assert_eq!(found, allowed, "{function}");
    }
}

/// The callback and bus grants exist only when their parameter names something, on exactly
/// what it names, for every function that settles or creates tasks; the intake queue, its DLQ,
/// its alarm and its function only when IntakeAppIds names a tenant.
#[test]
fn callback_grants_exist_only_for_what_the_parameters_name() {
    let template = load("template.yaml");
    let resources = &template["Resources"];
    let grants = [
        ("HasCallbackStateMachines", "states:SendTaskSuccess", "CallbackStateMachineArns"),
        ("HasCallbackFunctions", "lambda:SendDurableExecutionCallbackSuccess", "CallbackFunctionArns"),
        ("HasEventBus", "events:PutEvents", "EventBusName"),
    ];
    for function in ["CreateTaskFunction", "ProcessTaskFunction", "SweeperFunction", "IntakeTaskFunction"] {
        let statements = resources[function]["Properties"]["Policies"][0]["Statement"]
            .as_sequence()
            .unwrap_or_else(|| panic!("{function} statements"));
        for (condition, action, parameter) in grants {
            let granting: Vec<&Yaml> =
                statements.iter().filter(|s| serde_yaml::to_string(s).unwrap().contains(action)).collect();
            assert_eq!(granting.len(), 1, "{function}: one statement grants {action}");
            let branches = granting[0]["Fn::If"]
                .as_sequence()
                .unwrap_or_else(|| panic!("{function}: {action} is granted only under {condition}"));
            assert_eq!(branches[0].as_str(), Some(condition), "{function}: {action}");
            assert_eq!(branches[2]["Ref"].as_str(), Some("AWS::NoValue"), "{function}: nothing otherwise");
            assert!(
                serde_yaml::to_string(&branches[1]["Resource"]).unwrap().contains(parameter),
                "{function}: {action} on what {parameter} names only"
            );
        }
    }
    for other in ["ReleaseDeleteFunction", "MigrateFunction"] {
        let policies = serde_yaml::to_string(&resources[other]["Properties"]["Policies"]).unwrap();
        assert!(
            !policies.contains("states:") && !policies.contains("events:"),
            "{other} needs no callback grant"
        );
    }
    for intake in [
        "IntakeQueue",
        "IntakeDeadLetterQueue",
        "IntakeDeadLetterAlarm",
        "IntakeTaskFunction",
        "IntakeTaskLogGroup",
    ] {
        assert_eq!(resources[intake]["Condition"].as_str(), Some("HasIntake"), "{intake}");
    }
    let intake = &resources["IntakeQueue"]["Properties"];
    assert_eq!(
        intake["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0].as_str(),
        Some("IntakeDeadLetterQueue")
    );
    let timeout = template["Globals"]["Function"]["Timeout"].as_u64().expect("timeout");
    assert!(intake["VisibilityTimeout"].as_u64().expect("visibility") >= 6 * timeout);
    let mapping = &resources["IntakeTaskFunction"]["Properties"]["Events"]["Intake"]["Properties"];
    assert_eq!(mapping["FunctionResponseTypes"][0].as_str(), Some("ReportBatchItemFailures"));
    // Scoped by default: the function checks each message's SenderId against IntakeSenders,
    // which lists nobody unless the operator names the senders of each tenant.
    let senders =
        &resources["IntakeTaskFunction"]["Properties"]["Environment"]["Variables"]["AITASK_INTAKE_SENDERS"];
    assert_eq!(
        (senders["Fn::Join"][0].as_str(), senders["Fn::Join"][1]["Ref"].as_str()),
        (Some(","), Some("IntakeSenders")),
        "{senders:?}"
    );
    let parameter = &template["Parameters"]["IntakeSenders"];
    assert_eq!(parameter["Default"].as_str(), Some(""), "no sender is any tenant by default");
    assert_eq!(parameter["Type"].as_str(), Some("CommaDelimitedList"));
}

/// The optional web console (parameter `Console`): two GET routes to its own function, the only
/// routes without the JWT authorizer, and only when the parameter enables them.
#[test]
fn the_console_alone_needs_no_token() {
    let template = load("template.yaml");
    let resources = template["Resources"].as_mapping().expect("resources");
    for (name, resource) in resources {
        for (_, event) in resource["Properties"]["Events"].as_mapping().into_iter().flatten() {
            if event["Type"].as_str() != Some("HttpApi") {
                continue;
            }
            let open = event["Properties"]["Auth"]["Authorizer"].as_str() == Some("NONE");
            assert_eq!(open, name.as_str() == Some("ConsoleFunction"), "{name:?}: {event:?}");
        }
    }
    let console = &template["Resources"]["ConsoleFunction"];
    assert_eq!(console["Condition"].as_str(), Some("HasConsole"));
    assert_eq!(console["Metadata"]["BuildProperties"]["Binary"].as_str(), Some("web-console"));
    assert_eq!(template["Parameters"]["Console"]["Default"].as_str(), Some("Disabled"));
    let routes: BTreeSet<(String, String)> = console["Properties"]["Events"]
        .as_mapping()
        .expect("events")
        .values()
        .map(|e| {
            let p = &e["Properties"];
            (p["Method"].as_str().unwrap_or("").to_owned(), p["Path"].as_str().unwrap_or("").to_owned())
        })
        .collect();
    let expected: BTreeSet<(String, String)> =
        [("GET", "/console"), ("GET", "/console/{proxy+}")].map(|(m, p)| (m.to_owned(), p.to_owned())).into();
    assert_eq!(routes, expected);
}
