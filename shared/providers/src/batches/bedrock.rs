//! Amazon Bedrock batch inference: the lines as `{"recordId", "modelInput"}` JSONL in
//! `s3://{bucket}/aitasks/{batch_id}/input.jsonl` (each `modelInput` the Converse-shaped body of
//! the on-demand call), a job of it (`POST /model-invocation-job`, `modelInvocationType:
//! Converse`, our batch id its client request token, so a retried submit makes no second job),
//! its status (`GET /model-invocation-job/{arn}`), the job found again by its name (`GET
//! /model-invocation-jobs?nameContains=aitasks-{batch_id}`), the results under
//! `{output}/{job id}/` (`*.jsonl.out`: `{"recordId", "modelOutput"}` or `{"recordId",
//! "error": {"errorCode", "errorMessage"}}`) and `POST /model-invocation-job/{arn}/stop`.
//!
//! A `recordId` must be alphanumeric (Bedrock fails the job otherwise): it is the task id's
//! 32 hex digits ([`Uuid::simple`]). A result's record id is read back in that form or the
//! hyphenated one (a job submitted before record ids were simple); one naming no task of the
//! batch is left out, as every provider's.

use aitasks_contracts::AiRequest;
use async_trait::async_trait;
use reqwest::Method;
use serde_json::{json, Value};
use uuid::Uuid;

use super::aws::{encode, xml_value, xml_values, AwsCall};
use super::format::BatchFormat;
use super::judge::{judge, line_body, unanswered};
use super::left_behind::{Cleanup, Found, Sent};
use super::line::{BatchLine, BatchPhase, LineOutcome};
use crate::error::{is_token, said, ProviderError};
use crate::profiles::ModelProfile;
use crate::wire::{malformed, scrub_secret};

/// The most of a control-plane or listing answer that is read.
const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;
/// How many pages of a listing are read (1000 keys each).
const LIST_PAGES: usize = 10;

/// Amazon Bedrock's batch inference.
pub(super) struct BedrockBatches<'a> {
    pub(super) profile: &'a ModelProfile,
    /// `None` without the AWS configuration for batches (bucket, role): a call fails.
    pub(super) call: Option<AwsCall<'a>>,
}

impl<'a> BedrockBatches<'a> {
    fn aws_call(&self) -> Result<&AwsCall<'a>, ProviderError> {
        self.call.as_ref().ok_or_else(|| {
            ProviderError::Connection("no AWS configuration for Bedrock batches (bucket, role)".into())
        })
    }
}

#[async_trait]
impl BatchFormat for BedrockBatches<'_> {
    async fn submit(&self, batch_id: Uuid, lines: &[BatchLine<'_>]) -> Result<String, ProviderError> {
        let call = self.aws_call()?;
        let (aws, profile) = (call.aws, call.profile);
        let mut jsonl = String::new();
        for line in lines {
            let record =
                json!({"recordId": record_id(line.task_id), "modelInput": line_body(profile, line.request)});
            jsonl.push_str(&record.to_string());
            jsonl.push('\n');
        }
        let prefix = format!("aitasks/{batch_id}");
        let input_key = format!("{prefix}/input.jsonl");
        call.send(Method::PUT, &aws.object_url(&input_key), "s3", jsonl.into_bytes(), MAX_ANSWER_BYTES)
            .await?;
        let job = json!({
            "jobName": format!("aitasks-{batch_id}"),
            "clientRequestToken": batch_id.to_string(),
            "roleArn": aws.role_arn,
            "modelId": profile.model,
            "modelInvocationType": "Converse",
            "inputDataConfig": {"s3InputDataConfig": {
                "s3Uri": format!("s3://{}/{input_key}", aws.bucket), "s3InputFormat": "JSONL"}},
            "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": format!("s3://{}/{prefix}/output/", aws.bucket)}},
            "timeoutDurationInHours": 24,
        });
        let url = aws.bedrock_url("/model-invocation-job");
        let text =
            call.send(Method::POST, &url, "bedrock", job.to_string().into_bytes(), MAX_ANSWER_BYTES).await?;
        let created = parse(profile, &text)?;
        created["jobArn"].as_str().map(str::to_owned).ok_or_else(|| malformed(profile, "jobArn", &created))
    }

    async fn status(&self, job_arn: &str) -> Result<BatchPhase, ProviderError> {
        let call = self.aws_call()?;
        let (aws, profile) = (call.aws, call.profile);
        let url = aws.bedrock_url(&format!("/model-invocation-job/{}", encode(job_arn)));
        let text = call.send(Method::GET, &url, "bedrock", Vec::new(), MAX_ANSWER_BYTES).await?;
        let job = parse(profile, &text)?;
        let state = job["status"].as_str().ok_or_else(|| malformed(profile, "status", &job))?;
        let results = || -> Result<Vec<String>, ProviderError> {
            let output = job.pointer("/outputDataConfig/s3OutputDataConfig/s3Uri").and_then(Value::as_str);
            let output = output.ok_or_else(|| malformed(profile, "outputDataConfig", &job))?;
            // The job's id is the last part of its ARN; its files are under `{output}/{job id}/`.
            let id = job_arn.rsplit('/').next().filter(|id| is_token(id));
            let id = id.ok_or_else(|| ProviderError::Malformed("the job ARN has no job id".into()))?;
            Ok(vec![format!("{}/{id}/", output.trim_end_matches('/'))])
        };
        Ok(match state {
            "Submitted" | "Validating" | "Scheduled" | "InProgress" | "Stopping" => BatchPhase::Working,
            "Completed" | "PartiallyCompleted" => BatchPhase::Done { results: results()?, stopped: None },
            "Failed" | "Stopped" | "Expired" => {
                BatchPhase::Done { results: results().unwrap_or_default(), stopped: Some(state.to_owned()) }
            }
            _ => return Err(malformed(profile, "a known status", &job)),
        })
    }

    async fn cancel(&self, job_arn: &str) -> Result<(), ProviderError> {
        let call = self.aws_call()?;
        let aws = call.aws;
        let url = aws.bedrock_url(&format!("/model-invocation-job/{}/stop", encode(job_arn)));
        call.send(Method::POST, &url, "bedrock", Vec::new(), MAX_ANSWER_BYTES).await.map(drop)
    }

    /// By the job's name: keyed.
    async fn find(&self, batch_id: Uuid, _sent: &Sent) -> Result<Found, ProviderError> {
        Ok(find(self.aws_call()?, batch_id).await?.map_or(Found::Nothing, Found::Keyed))
    }

    /// The job's input and output are S3 objects the bucket's lifecycle rule expires: nothing
    /// to do here.
    async fn clean_up(&self, _job_arn: &str) -> Result<Cleanup, ProviderError> {
        Ok(Cleanup::Done)
    }

    /// The result files (`*.jsonl.out`) under a job's output URI, which must be in the batch bucket.
    async fn result_files(&self, output: &str) -> Result<Vec<String>, ProviderError> {
        let call = self.aws_call()?;
        let own = format!("s3://{}/", call.aws.bucket);
        let prefix = output.strip_prefix(&own).filter(|prefix| !prefix.contains("..")).ok_or_else(|| {
            ProviderError::Malformed(format!(
                "the results are not in the batch bucket: {}",
                said(None, "uri", output)
            ))
        })?;
        Ok(list(call, prefix).await?.into_iter().filter(|key| key.ends_with(".jsonl.out")).collect())
    }

    /// One result file, its body to be read as it arrives.
    async fn open(&self, key: &str) -> Result<reqwest::Response, ProviderError> {
        let call = self.aws_call()?;
        call.open(&call.aws.object_url(key)).await
    }

    fn id_field(&self) -> &'static str {
        "recordId"
    }

    /// One record: `{"recordId", "modelOutput"}` or `{"recordId", "error": {"errorCode", "errorMessage"}}`.
    fn outcome(&self, line: &Value, request: &AiRequest) -> LineOutcome {
        let profile = self.profile;
        if let Some(output) = line.get("modelOutput").filter(|o| o.is_object()) {
            return judge(profile, request, output);
        }
        let error = &line["error"];
        if !error.is_object() {
            return LineOutcome::Failed(malformed(profile, "modelOutput or error", line));
        }
        let text = scrub_secret(error["errorMessage"].as_str().unwrap_or_default().to_owned(), profile);
        let code = &error["errorCode"];
        let status = code.as_u64().and_then(|c| u16::try_from(c).ok());
        let name = code.as_str().filter(|name| is_token(name));
        if matches!(name, Some("Expired" | "JobExpired" | "Stopped")) {
            return unanswered("the job ended first");
        }
        let message = said(name, "errorMessage", &text);
        LineOutcome::Failed(match (name, status) {
            (Some("ThrottlingException"), _) | (_, Some(429)) => {
                ProviderError::RateLimited { retry_after: None, message }
            }
            (Some("AccessDeniedException"), _) | (_, Some(401 | 403)) => {
                ProviderError::Auth { status: status.unwrap_or(403) }
            }
            (Some("ModelTimeoutException"), _) | (_, Some(408)) => {
                ProviderError::Server { status: 408, message }
            }
            (_, Some(status)) if status >= 500 || status == 424 => ProviderError::Server { status, message },
            (Some("ValidationException"), _) => ProviderError::Rejected { status: 400, message },
            (_, Some(status)) if status >= 400 => ProviderError::Rejected { status, message },
            _ => ProviderError::Server { status: 500, message },
        })
    }
}

fn parse(profile: &ModelProfile, text: &str) -> Result<Value, ProviderError> {
    serde_json::from_str(text).map_err(|_| {
        ProviderError::Malformed(format!(
            "not JSON: {}",
            said(None, "body", &scrub_secret(text.to_owned(), profile))
        ))
    })
}

/// A task's `recordId`: its id's 32 hex digits, alphanumeric as Bedrock requires.
fn record_id(task_id: Uuid) -> String {
    task_id.simple().to_string()
}

/// The keys under `prefix` (ListObjectsV2, bounded pages).
async fn list(call: &AwsCall<'_>, prefix: &str) -> Result<Vec<String>, ProviderError> {
    let aws = call.aws;
    let mut keys = Vec::new();
    let mut token: Option<String> = None;
    for _ in 0..LIST_PAGES {
        let mut url = format!("{}?list-type=2&prefix={}", aws.bucket_url(), encode(prefix));
        if let Some(token) = &token {
            url = format!(
                "{}?continuation-token={}&list-type=2&prefix={}",
                aws.bucket_url(),
                encode(token),
                encode(prefix)
            );
        }
        let text = call.send(Method::GET, &url, "s3", Vec::new(), MAX_ANSWER_BYTES).await?;
        keys.extend(xml_values(&text, "Key"));
        match (xml_value(&text, "IsTruncated").as_deref(), xml_value(&text, "NextContinuationToken")) {
            (Some("true"), Some(next)) => token = Some(next),
            _ => break,
        }
    }
    Ok(keys)
}

/// The job made before for `batch_id`, if any (`GET /model-invocation-jobs?nameContains=`, its
/// name `aitasks-{batch_id}`): one page, and the name is ours alone.
async fn find(call: &AwsCall<'_>, batch_id: Uuid) -> Result<Option<String>, ProviderError> {
    let (aws, profile) = (call.aws, call.profile);
    let name = format!("aitasks-{batch_id}");
    let url =
        format!("{}?maxResults=10&nameContains={}", aws.bedrock_url("/model-invocation-jobs"), encode(&name));
    let text = call.send(Method::GET, &url, "bedrock", Vec::new(), MAX_ANSWER_BYTES).await?;
    let listed = parse(profile, &text)?;
    let jobs = listed["invocationJobSummaries"]
        .as_array()
        .ok_or_else(|| malformed(profile, "invocationJobSummaries", &listed))?;
    Ok(jobs
        .iter()
        .find(|job| job["jobName"] == name.as_str())
        .and_then(|job| job["jobArn"].as_str())
        .map(str::to_owned))
}
