//! The batch client against Bedrock's batch-inference control plane (a local stub that checks
//! every request's SigV4 signature) and moto's S3, where the records and results live.

use std::time::Duration;

use aitasks_providers::{
    BatchAws, BatchClient, CancellationToken, LineOutcome, ModelProfile, Provider, ProviderError,
};
use aitasks_testkit::{
    BatchOutcome, BedrockBatchStub, LineScript, Moto, BATCH_AWS_ACCESS_KEY, BATCH_AWS_SECRET_KEY,
};
use aws_credential_types::provider::SharedCredentialsProvider;
use aws_credential_types::Credentials;
use serde_json::json;
use uuid::Uuid;

use crate::batch_support::{answered, by_task, lines, profile, tasks, until_done};

const MODEL: &str = "anthropic.claude-3-haiku-20240307-v1:0";

struct Setup {
    stub: BedrockBatchStub,
    client: BatchClient,
    profile: ModelProfile,
    aws: BatchAws,
}

async fn setup() -> Setup {
    let moto = Moto::shared().await;
    let stub = BedrockBatchStub::start(&moto.endpoint).await;
    let bucket = format!("aitasks-batches-{}", Uuid::new_v4().simple());
    stub.create_bucket(&bucket).await;
    let aws = BatchAws {
        credentials: SharedCredentialsProvider::new(Credentials::new(
            BATCH_AWS_ACCESS_KEY,
            BATCH_AWS_SECRET_KEY,
            None,
            None,
            "test",
        )),
        region: "us-east-1".into(),
        bucket,
        role_arn: "arn:aws:iam::123456789012:role/aitasks-batch".into(),
        s3_endpoint: Some(moto.endpoint.clone()),
        bedrock_endpoint: Some(stub.endpoint.clone()),
    };
    let client = BatchClient::new(Duration::from_secs(10)).unwrap().with_aws(aws.clone());
    let profile = profile(json!({"provider": "bedrock", "model": MODEL, "batch": {"minRecords": 1},
        "prices": {"inputPerMillion": 0.25, "outputPerMillion": 1.25}}));
    Setup { stub, client, profile, aws }
}

#[tokio::test]
async fn a_job_round_trips_through_s3_with_converse_records() {
    let Setup { stub, client, profile, .. } = setup().await;
    let (ids, requests) = tasks(4);
    stub.script(ids[1], LineScript::Duplicate);
    let batch_id = Uuid::new_v4();
    let job = client.submit(&profile, batch_id, &lines(&ids, &requests)).await.unwrap();
    assert!(job.starts_with("arn:aws:bedrock:"), "{job}");
    let again = client.submit(&profile, batch_id, &lines(&ids, &requests)).await.unwrap();
    assert_eq!((again, stub.creates()), (job.clone(), 1), "the client request token: no second job");

    // Each recordId is the task id's 32 hex digits: alphanumeric, as Bedrock requires.
    let records = stub.records();
    let record_ids: Vec<String> = records.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(record_ids, ids.iter().map(|id| id.simple().to_string()).collect::<Vec<_>>());
    assert!(record_ids.iter().all(|id| id.len() == 32 && id.chars().all(|c| c.is_ascii_alphanumeric())));
    let input = &records[0].1;
    assert_eq!(input["messages"][0]["role"], "user");
    assert!(input["system"][0]["text"].as_str().unwrap().starts_with("Sentiment?"));
    assert_eq!(input["toolConfig"]["toolChoice"], json!({"tool": {"name": "classification"}}));
    assert_eq!(input["inferenceConfig"]["maxTokens"], 200);

    let (results, stopped) = until_done(&client, &profile, &job).await;
    assert_eq!(stopped, None);
    let outcomes = by_task(client.results(&profile, &results, &requests).all().await.unwrap());
    assert_eq!(outcomes.len(), 4);
    for id in &ids {
        let done = answered(&outcomes[id][0]);
        assert_eq!((done.output.clone(), done.usage.calls, done.usage.output_tokens), (json!("pos"), 1, 7));
        let cost = done.usage.estimated_cost_usd.unwrap();
        assert!((cost - (11.0 * 0.25 + 7.0 * 1.25) / 1e6).abs() < 1e-12, "the profile's prices: {cost}");
    }
    assert_eq!(outcomes[&ids[1]].len(), 2);
    assert_eq!(stub.bad_signatures(), 0);
}

#[tokio::test]
async fn error_and_invalid_records_and_a_failed_job() {
    let Setup { stub, client, profile, .. } = setup().await;
    let (ids, requests) = tasks(4);
    stub.script(ids[0], LineScript::Error(429));
    stub.script(ids[1], LineScript::Error(400));
    stub.script(ids[2], LineScript::Invalid);
    stub.script(ids[3], LineScript::Omit);
    let job = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    let (results, _) = until_done(&client, &profile, &job).await;
    let outcomes = by_task(client.results(&profile, &results, &requests).all().await.unwrap());
    assert!(matches!(&outcomes[&ids[0]][..], [LineOutcome::Failed(ProviderError::RateLimited { .. })]));
    assert!(matches!(
        &outcomes[&ids[1]][..],
        [LineOutcome::Failed(ProviderError::Rejected { status: 400, .. })]
    ));
    let [LineOutcome::Invalid(resume)] = &outcomes[&ids[2]][..] else { panic!("{:?}", outcomes[&ids[2]]) };
    // Converse messages, ready for the repair turn: the question, the bad tool call, its error result.
    assert_eq!(resume.conversation.len(), 3);
    assert_eq!(resume.conversation[2]["content"][0]["toolResult"]["status"], "error");
    // The repair turn, on-demand through the Converse SDK client, continues that conversation.
    let converse = crate::bedrock_client::serve(vec![crate::bedrock_client::answer(
        json!({"choice": "neg"}),
        "tool_use",
    )])
    .await;
    let live = ModelProfile { base_url: converse.uri(), stream: false, ..profile.clone() };
    let done = crate::bedrock_client::client(crate::bedrock_client::SECRET)
        .repair_gated(
            &live,
            &requests[&ids[2]],
            resume,
            &aitasks_providers::NoLimits,
            &aitasks_providers::NoTap,
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!((done.output, done.usage.calls, done.usage.input_tokens), (json!("neg"), 2, 41));
    let sent: serde_json::Value = converse.received_requests().await.unwrap()[0].body_json().unwrap();
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[1]["content"][0]["toolUse"]["name"], "classification");
    assert_eq!(messages[2]["content"][0]["toolResult"]["status"], "error");
    assert!(!outcomes.contains_key(&ids[3]));

    stub.set_outcome(BatchOutcome::Fail);
    let job = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap();
    let (_, stopped) = until_done(&client, &profile, &job).await;
    assert_eq!(stopped.as_deref(), Some("Failed"));
    client.cancel(&profile, &job).await.unwrap();
}

#[tokio::test]
async fn a_request_signed_with_another_secret_is_refused() {
    let Setup { stub, profile, aws, .. } = setup().await;
    let wrong = BatchAws {
        credentials: SharedCredentialsProvider::new(Credentials::new(
            BATCH_AWS_ACCESS_KEY,
            "not-the-secret",
            None,
            None,
            "t",
        )),
        ..aws
    };
    let client = BatchClient::new(Duration::from_secs(10)).unwrap().with_aws(wrong);
    let (ids, requests) = tasks(1);
    let error = client.submit(&profile, Uuid::new_v4(), &lines(&ids, &requests)).await.unwrap_err();
    assert!(matches!(error, ProviderError::Auth { status: 403 }), "{error:?}");
    assert!(!format!("{error} {error:?}").contains("not-the-secret"));
    assert_eq!((stub.bad_signatures(), stub.creates()), (1, 0));
}

#[tokio::test]
async fn results_outside_the_bucket_are_refused_and_no_aws_is_an_error() {
    let Setup { client, profile, .. } = setup().await;
    let (_, requests) = tasks(1);
    let error =
        client.results(&profile, &["s3://someone-else/x/".to_owned()], &requests).all().await.unwrap_err();
    assert!(matches!(error, ProviderError::Malformed(_)), "{error:?}");
    let bare = BatchClient::new(Duration::from_secs(1)).unwrap();
    assert!(matches!(bare.status(&profile, "arn").await.unwrap_err(), ProviderError::Connection(_)));
}

/// A result names its task in the simple form, or hyphenated (a job submitted before record ids
/// were simple); a record id naming no task of the batch, or not an id at all, is left out.
#[tokio::test]
async fn record_ids_are_read_back_and_strangers_left_out() {
    let Setup { stub, client, profile, aws } = setup().await;
    let (ids, requests) = tasks(2);
    let body = |id: &str| {
        json!({"recordId": id, "modelInput": {}, "modelOutput": {"output": {"message": {"role": "assistant",
            "content": [{"toolUse": {"toolUseId": "t", "name": "classification", "input": {"choice": "pos"}}}]}},
            "stopReason": "tool_use", "usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}}})
        .to_string()
    };
    let stranger = Uuid::new_v4().simple().to_string();
    let text = [
        body(&ids[0].simple().to_string()),
        body(&ids[1].to_string()),
        body(&stranger),
        body("../../etc"),
        json!({"recordId": 42, "modelOutput": {}}).to_string(),
    ]
    .join("\n");
    stub.put_object(&aws.bucket, "aitasks/hostile/output/job1/input.jsonl.out", &text).await;
    let prefix = format!("s3://{}/aitasks/hostile/output/job1/", aws.bucket);
    let outcomes = by_task(client.results(&profile, &[prefix], &requests).all().await.unwrap());
    assert_eq!(outcomes.len(), 2, "only the batch's own tasks: {outcomes:?}");
    for id in &ids {
        assert_eq!(answered(&outcomes[id][0]).output, json!("pos"));
    }
}

/// The stub fails a job whose record ids are not alphanumeric, as Bedrock does (the hyphenated
/// ids sent before), and the client reads that as a failed batch.
#[tokio::test]
async fn a_job_of_hyphenated_record_ids_fails() {
    let Setup { stub, client, profile, aws } = setup().await;
    let line = json!({"recordId": Uuid::new_v4().to_string(), "modelInput": {}}).to_string();
    stub.put_object(&aws.bucket, "aitasks/hyphens/input.jsonl", &line).await;
    let (status, created) = stub.create_job(&aws.bucket, "aitasks/hyphens/input.jsonl").await;
    assert_eq!(status, 200, "{created}");
    let job = created["jobArn"].as_str().unwrap();
    let (_, stopped) = until_done(&client, &profile, job).await;
    assert_eq!(stopped.as_deref(), Some("Failed"));
    assert_eq!(stub.bad_signatures(), 0);
}
