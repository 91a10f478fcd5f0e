//! Bedrock batch inference as the stack grants it (BatchBedrockModelArns): the batch bucket and
//! service role exist, the sweeper is told both, and its S3, Bedrock and PassRole calls are
//! judged through the proxy on exactly what the template grants it; every other function's are
//! refused. Needs `make up` and the tools (no function binary runs).

use aitasks_rehearse::aws_proxy::Call;
use aitasks_rehearse::{Options, Rehearsal, BATCH_MODEL_ARN};
use serde_json::json;

fn options() -> Options {
    Options::for_checkout(&aitasks_testkit::workspace_root()).expect("the tools (scripts/tools.sh)")
}

/// A request to the proxy as `function` (its role's access key, signed for `service`: the
/// proxy tells the caller and the API by those), with its status and body.
async fn call_as(
    rehearsal: &Rehearsal,
    function: &str,
    service: &str,
    method: reqwest::Method,
    path: &str,
    body: Vec<u8>,
) -> (u16, String) {
    let key = &rehearsal.credentials(function).expect("credentials").access_key;
    let date = chrono::Utc::now().format("%Y%m%d");
    let answer = reqwest::Client::new()
        .request(method, format!("{}{path}", rehearsal.proxy.endpoint))
        .header(
            "authorization",
            format!("AWS4-HMAC-SHA256 Credential={key}/{date}/us-east-1/{service}/aws4_request, SignedHeaders=host, Signature=0"),
        )
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("the proxy answers");
    (answer.status().as_u16(), answer.text().await.expect("a body"))
}

fn create_job(model: &str, role: &str) -> Vec<u8> {
    json!({"jobName": "aitasks-rehearsal", "clientRequestToken": "rehearsal", "roleArn": role, "modelId": model,
           "modelInvocationType": "Converse",
           "inputDataConfig": {"s3InputDataConfig": {"s3Uri": "s3://b/aitasks/x/input.jsonl", "s3InputFormat": "JSONL"}},
           "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": "s3://b/aitasks/x/output/"}}})
    .to_string()
    .into_bytes()
}

fn last_calls(rehearsal: &Rehearsal, operation: &str) -> Vec<Call> {
    let calls = rehearsal.proxy.calls();
    let last: Vec<Call> = calls.iter().rev().take_while(|c| c.operation == operation).cloned().collect();
    last.into_iter().rev().collect()
}

#[tokio::test]
async fn the_sweeper_s_batch_calls_are_judged_on_exactly_its_grants() {
    let rehearsal = Rehearsal::prepare(options()).await.expect("the local stack");
    rehearsal.cleanup().await;
    let sweeper = rehearsal.function("SweeperFunction").expect("the sweeper");
    let bucket = rehearsal.buckets["BatchBucket"].clone();
    let role = rehearsal.deployment.resolved["Resources"]["BatchServiceRole"]["Arn"]
        .as_str()
        .expect("the batch service role")
        .to_owned();
    assert_eq!(sweeper.environment.get("AITASK_BATCH_BUCKET"), Some(&bucket));
    assert_eq!(sweeper.environment.get("AITASK_BATCH_ROLE_ARN"), Some(&role));
    assert!(sweeper.memory_mb >= 512, "a 50 MB batch file fits: {} MB", sweeper.memory_mb);
    assert!(sweeper.timeout_seconds > 60, "a minute of work fits: {} s", sweeper.timeout_seconds);
    for resource in [
        "BatchBucket",
        "BatchBucketPolicy",
        "BatchServiceRole",
        "BatchJobStateRule",
        "BatchJobStatePermission",
    ] {
        assert!(rehearsal.deployment.resource_types.contains_key(resource), "{resource} exists");
    }
    let rule = rehearsal
        .deployment
        .event_rules
        .iter()
        .find(|r| r.logical_id == "BatchJobStateRule")
        .expect("the rule");
    assert_eq!(
        (rule.function.as_str(), rule.permitted),
        ("SweeperFunction", true),
        "the rule may invoke the sweeper"
    );
    assert_eq!(rule.pattern["source"][0], "aws.bedrock");
    assert_eq!(rule.pattern["detail-type"][0], "Batch Inference Job State Change");

    // The batch file goes in, is listed and read back: judged, then served by moto's S3.
    let key = "aitasks/0b6f/input.jsonl";
    let lines = b"{\"recordId\":\"t1\",\"modelInput\":{}}\n".to_vec();
    let put = call_as(
        &rehearsal,
        "SweeperFunction",
        "s3",
        reqwest::Method::PUT,
        &format!("/{bucket}/{key}"),
        lines.clone(),
    )
    .await;
    assert_eq!(put.0, 200, "{put:?}");
    let listed = call_as(
        &rehearsal,
        "SweeperFunction",
        "s3",
        reqwest::Method::GET,
        &format!("/{bucket}?list-type=2&prefix=aitasks%2F0b6f%2F"),
        Vec::new(),
    )
    .await;
    assert_eq!(listed.0, 200, "{listed:?}");
    assert!(listed.1.contains(&format!("<Key>{key}</Key>")), "the listing names the file: {}", listed.1);
    let got = call_as(
        &rehearsal,
        "SweeperFunction",
        "s3",
        reqwest::Method::GET,
        &format!("/{bucket}/{key}"),
        Vec::new(),
    )
    .await;
    assert_eq!((got.0, got.1.as_bytes()), (200, lines.as_slice()));

    // Another bucket, and the batch bucket for any other function, are refused as S3 refuses.
    let other = format!("{bucket}-other");
    aitasks_rehearse::local_aws::create_bucket(&rehearsal.secrets_manager.endpoint, &other)
        .await
        .expect("a bucket");
    let refused = call_as(
        &rehearsal,
        "SweeperFunction",
        "s3",
        reqwest::Method::PUT,
        &format!("/{other}/k"),
        b"x".to_vec(),
    )
    .await;
    assert_eq!(refused.0, 403, "{refused:?}");
    assert!(
        refused.1.contains("<Code>AccessDenied</Code>") && refused.1.contains("s3:PutObject"),
        "{}",
        refused.1
    );
    for function in ["ProcessTaskFunction", "CreateTaskFunction"] {
        let (status, _) = call_as(
            &rehearsal,
            function,
            "s3",
            reqwest::Method::GET,
            &format!("/{bucket}/{key}"),
            Vec::new(),
        )
        .await;
        assert_eq!(status, 403, "{function} may not read the batch bucket");
    }

    // A job on the model named, passing the batch role: every permission allowed (the model,
    // the job, the role passed to Bedrock). No Bedrock stub is set here: 501 once judged.
    let (status, body) = call_as(
        &rehearsal,
        "SweeperFunction",
        "bedrock",
        reqwest::Method::POST,
        "/model-invocation-job",
        create_job(BATCH_MODEL_ARN, &role),
    )
    .await;
    assert_eq!(status, 501, "{body}");
    let judged = last_calls(&rehearsal, "CreateModelInvocationJob");
    let verdicts: Vec<(&str, &str, bool)> =
        judged.iter().map(|c| (c.action.as_str(), c.resource.as_str(), c.decision.is_allowed())).collect();
    assert_eq!(
        verdicts,
        vec![
            ("bedrock:CreateModelInvocationJob", BATCH_MODEL_ARN, true),
            (
                "bedrock:CreateModelInvocationJob",
                "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/aitasks-rehearsal",
                true
            ),
            ("iam:PassRole", role.as_str(), true),
        ]
    );
    let job = "arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Amodel-invocation-job%2Fj1";
    for (method, path, operation) in [
        (reqwest::Method::GET, format!("/model-invocation-job/{job}"), "GetModelInvocationJob"),
        (reqwest::Method::POST, format!("/model-invocation-job/{job}/stop"), "StopModelInvocationJob"),
    ] {
        let (status, body) =
            call_as(&rehearsal, "SweeperFunction", "bedrock", method, &path, Vec::new()).await;
        assert_eq!(status, 501, "{operation} allowed: {body}");
        assert!(last_calls(&rehearsal, operation).iter().all(|c| c.decision.is_allowed()));
    }

    // Another model, another role, another function: refused as Bedrock refuses, and named.
    let other_model = "anthropic.claude-3-opus-20240229-v1:0";
    let (status, body) = call_as(
        &rehearsal,
        "SweeperFunction",
        "bedrock",
        reqwest::Method::POST,
        "/model-invocation-job",
        create_job(other_model, &role),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body.contains("AccessDeniedException") && body.contains(&format!("foundation-model/{other_model}")),
        "{body}"
    );
    let admin = "arn:aws:iam::123456789012:role/admin";
    let (status, body) = call_as(
        &rehearsal,
        "SweeperFunction",
        "bedrock",
        reqwest::Method::POST,
        "/model-invocation-job",
        create_job(BATCH_MODEL_ARN, admin),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("iam:PassRole") && body.contains(admin), "{body}");
    let (status, _) = call_as(
        &rehearsal,
        "ProcessTaskFunction",
        "bedrock",
        reqwest::Method::POST,
        "/model-invocation-job",
        create_job(BATCH_MODEL_ARN, &role),
    )
    .await;
    assert_eq!(status, 403, "process-task may not start batch jobs");
    let refused: Vec<Call> =
        rehearsal.proxy.calls().into_iter().filter(|c| !c.decision.is_allowed()).collect();
    assert!(
        refused.iter().any(|c| c.function == "SweeperFunction"
            && c.action == "bedrock:CreateModelInvocationJob"
            && c.resource.ends_with(other_model)),
        "{refused:#?}"
    );
}

/// Without BatchBedrockModelArns: no bucket, no role, no rule, the sweeper not told of them,
/// and no function may touch S3, start a batch job or pass a role.
#[tokio::test]
async fn without_batch_models_nothing_is_granted() {
    let mut options = options();
    options.parameters.insert("BatchBedrockModelArns".to_owned(), String::new());
    let rehearsal = Rehearsal::prepare(options).await.expect("the local stack");
    rehearsal.cleanup().await;
    for resource in [
        "BatchBucket",
        "BatchBucketPolicy",
        "BatchServiceRole",
        "BatchJobStateRule",
        "BatchJobStatePermission",
    ] {
        assert!(!rehearsal.deployment.resource_types.contains_key(resource), "{resource} is not created");
    }
    assert!(rehearsal.deployment.event_rules.is_empty());
    let sweeper = rehearsal.function("SweeperFunction").expect("the sweeper");
    for variable in ["AITASK_BATCH_BUCKET", "AITASK_BATCH_ROLE_ARN"] {
        assert!(!sweeper.environment.contains_key(variable), "{variable} is unset");
    }
    let bedrock = [("iam:PassedToService", "bedrock.amazonaws.com")];
    for (logical_id, function) in &rehearsal.deployment.functions {
        for (action, resource) in [
            ("s3:PutObject", "arn:aws:s3:::any-bucket/k"),
            ("s3:ListBucket", "arn:aws:s3:::any-bucket"),
            ("bedrock:CreateModelInvocationJob", BATCH_MODEL_ARN),
            (
                "bedrock:CreateModelInvocationJob",
                "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/j",
            ),
            (
                "bedrock:GetModelInvocationJob",
                "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/j",
            ),
            ("iam:PassRole", "arn:aws:iam::123456789012:role/any"),
        ] {
            assert!(
                !aitasks_rehearse::iam::evaluate_in(&function.statements, action, resource, &bedrock)
                    .is_allowed(),
                "{logical_id} may call {action} on {resource}"
            );
        }
    }
}
