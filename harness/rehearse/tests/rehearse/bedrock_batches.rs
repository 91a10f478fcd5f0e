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

    // What Bedrock may do as BatchServiceRole: be assumed by Bedrock only, for this account's
    // and region's batch jobs; read and write the batch bucket (in this account) and nothing else.
    let service_role = &rehearsal.deployment.resolved["Resources"]["BatchServiceRole"]["Properties"];
    let trust = &service_role["AssumeRolePolicyDocument"]["Statement"][0];
    assert_eq!(trust["Principal"]["Service"], "bedrock.amazonaws.com");
    assert_eq!(trust["Condition"]["StringEquals"]["aws:SourceAccount"], "123456789012");
    assert_eq!(
        trust["Condition"]["ArnLike"]["aws:SourceArn"],
        "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/*"
    );
    let mut as_bedrock = Vec::new();
    for policy in service_role["Policies"].as_array().expect("policies") {
        as_bedrock.extend(
            aitasks_rehearse::iam::Statement::from_document("BatchServiceRole", &policy["PolicyDocument"])
                .expect("statements"),
        );
    }
    let own = [("aws:ResourceAccount", "123456789012")];
    let may = |action: &str, resource: &str, context: &[(&str, &str)]| {
        aitasks_rehearse::iam::evaluate_in(&as_bedrock, action, resource, context).is_allowed()
    };
    assert!(may("s3:GetObject", &format!("arn:aws:s3:::{bucket}/aitasks/x/input.jsonl"), &own));
    assert!(may("s3:PutObject", &format!("arn:aws:s3:::{bucket}/aitasks/x/output/j/input.jsonl.out"), &own));
    assert!(may("s3:ListBucket", &format!("arn:aws:s3:::{bucket}"), &own));
    assert!(!may("s3:GetObject", "arn:aws:s3:::another-bucket/k", &own), "another bucket");
    assert!(!may(
        "s3:GetObject",
        &format!("arn:aws:s3:::{bucket}/k"),
        &[("aws:ResourceAccount", "999999999999")]
    ));
    assert!(!may("s3:DeleteObject", &format!("arn:aws:s3:::{bucket}/k"), &own));
    assert!(!may("bedrock:InvokeModel", BATCH_MODEL_ARN, &own));

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
    // the job, the role passed to Bedrock), then Bedrock's stub answers: its input file is not
    // in S3 (bucket `b`), so a ValidationException, as Bedrock's.
    let (status, body) = call_as(
        &rehearsal,
        "SweeperFunction",
        "bedrock",
        reqwest::Method::POST,
        "/model-invocation-job",
        create_job(BATCH_MODEL_ARN, &role),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("ValidationException"), "{body}");
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
        // Allowed, and the stub knows no job j1.
        assert_eq!(status, 404, "{operation} allowed: {body}");
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

/// An allowed Bedrock call reaches the Bedrock stub signed with the stub's own credentials (as
/// `BedrockBatchStub` checks them: signed again with its secret, compared), its path, query and
/// body unchanged; a refused one never reaches it. A stand-in server checks the signature here.
#[tokio::test]
async fn allowed_bedrock_calls_reach_the_stub_signed_for_it() {
    use std::sync::{Arc, Mutex};

    use aitasks_rehearse::aws_proxy::AwsProxy;
    use aitasks_rehearse::iam::Statement;
    use axum::http::{HeaderMap, Method, Uri};

    const KEY: &str = "AKIDSTANDIN";
    const SECRET: &str = "stand-in-secret";
    type Seen = Arc<Mutex<Vec<(String, String, bool, Vec<u8>)>>>;
    let seen: Seen = Arc::default();
    async fn check(
        axum::extract::State(seen): axum::extract::State<Seen>,
        method: Method,
        uri: Uri,
        headers: HeaderMap,
        body: axum::body::Bytes,
    ) -> &'static str {
        let header =
            |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        let authorization = header("authorization");
        let signed = authorization
            .split("SignedHeaders=")
            .nth(1)
            .and_then(|s| s.split(',').next())
            .unwrap_or_default();
        let time = chrono::NaiveDateTime::parse_from_str(&header("x-amz-date"), "%Y%m%dT%H%M%SZ")
            .map(|t| std::time::SystemTime::from(t.and_utc()))
            .unwrap_or(std::time::UNIX_EPOCH);
        let pairs: Vec<(String, String)> =
            signed.split(';').map(|name| (name.to_owned(), header(name))).collect();
        let identity = aws_credential_types::Credentials::new(KEY, SECRET, None, None, "stand-in").into();
        let params = aws_sigv4::sign::v4::SigningParams::builder()
            .identity(&identity)
            .region("us-east-1")
            .name("bedrock")
            .time(time)
            .settings(aws_sigv4::http_request::SigningSettings::default())
            .build()
            .unwrap();
        let url =
            format!("http://{}{}", header("host"), uri.path_and_query().map(|p| p.as_str()).unwrap_or("/"));
        let signable = aws_sigv4::http_request::SignableRequest::new(
            method.as_str(),
            &url,
            pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            aws_sigv4::http_request::SignableBody::Bytes(&body),
        )
        .unwrap();
        let (_, signature) = aws_sigv4::http_request::sign(signable, &params.into()).unwrap().into_parts();
        let valid = authorization.starts_with(&format!("AWS4-HMAC-SHA256 Credential={KEY}/"))
            && authorization.ends_with(&format!("Signature={signature}"));
        let path = uri.path_and_query().map(|p| p.to_string()).unwrap_or_default();
        seen.lock().unwrap().push((method.to_string(), path, valid, body.to_vec()));
        r#"{"jobArn": "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/standin1"}"#
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let stand_in = format!("http://{}", listener.local_addr().unwrap());
    let router = axum::Router::new().fallback(check).with_state(seen.clone());
    tokio::spawn(async move { axum::serve(listener, router).await });

    let proxy = AwsProxy::start("http://127.0.0.1:9", "http://127.0.0.1:9", "us-east-1", "123456789012")
        .await
        .unwrap();
    let role = "arn:aws:iam::123456789012:role/batch";
    let policy = json!({"Statement": [
        {"Effect": "Allow", "Action": "bedrock:CreateModelInvocationJob",
         "Resource": [BATCH_MODEL_ARN, "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/*"]},
        {"Effect": "Allow", "Action": "bedrock:GetModelInvocationJob",
         "Resource": "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/*"},
        {"Effect": "Allow", "Action": "iam:PassRole", "Resource": role,
         "Condition": {"StringEquals": {"iam:PassedToService": "bedrock.amazonaws.com"}}}
    ]});
    let statements = Statement::from_document("SweeperFunctionRole policy 0", &policy).unwrap();
    proxy.register("AKIDSWEEPER", "SweeperFunction", "arn:aws:iam::123456789012:role/sweeper", statements);
    proxy.set_bedrock(&stand_in, KEY, SECRET);
    let send = |method: reqwest::Method, path: &str, body: Vec<u8>| {
        let date = chrono::Utc::now().format("%Y%m%d");
        reqwest::Client::new()
            .request(method, format!("{}{path}", proxy.endpoint))
            .header("authorization", format!("AWS4-HMAC-SHA256 Credential=AKIDSWEEPER/{date}/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=0"))
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let create = create_job(BATCH_MODEL_ARN, role);
    let answer = send(reqwest::Method::POST, "/model-invocation-job", create.clone()).await.unwrap();
    assert_eq!(answer.status(), 200);
    assert!(answer.text().await.unwrap().contains("standin1"), "the stub's answer comes back");
    let job = "arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Amodel-invocation-job%2Fstandin1";
    let answer =
        send(reqwest::Method::GET, &format!("/model-invocation-job/{job}"), Vec::new()).await.unwrap();
    assert_eq!(answer.status(), 200);
    // Refused (another model; a stop the policy does not grant): the stub never hears of them.
    let other =
        send(reqwest::Method::POST, "/model-invocation-job", create_job("amazon.titan-text-lite-v1", role))
            .await
            .unwrap();
    assert_eq!(other.status(), 403);
    let stop =
        send(reqwest::Method::POST, &format!("/model-invocation-job/{job}/stop"), Vec::new()).await.unwrap();
    assert_eq!(stop.status(), 403);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            ("POST".to_owned(), "/model-invocation-job".to_owned(), true, create),
            ("GET".to_owned(), format!("/model-invocation-job/{job}"), true, Vec::new()),
        ],
        "each allowed call once, signed for the stub, as sent"
    );
}
