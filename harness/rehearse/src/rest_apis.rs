//! The REST calls of Bedrock batch inference, as IAM judges them: S3 (path-style, as a client
//! given `AWS_ENDPOINT_URL_S3` sends them: `PUT|GET|HEAD|DELETE /{bucket}/{key}`, `GET
//! /{bucket}?list-type=2&prefix=`) and the Bedrock control plane (`POST /model-invocation-job`,
//! `GET /model-invocation-job/{id}`, `POST /model-invocation-job/{id}/stop`, `GET
//! /model-invocation-jobs`). These protocols carry no `X-Amz-Target`: the service is the one
//! the request is signed for (its SigV4 credential scope).
//!
//! A call can need several permissions, each of which must be allowed: a batch job's create is
//! authorized on the model it runs and on the job (`bedrock:CreateModelInvocationJob` on both),
//! and passes its service role (`iam:PassRole` on `roleArn`, with `iam:PassedToService` naming
//! Bedrock, as IAM evaluates it).

use axum::http::HeaderMap;
use serde_json::Value;

use crate::callback_apis::percent_decode;

/// One permission a call needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub action: String,
    pub resource: String,
    /// The condition keys IAM evaluates this permission with (`iam:PassedToService`).
    pub context: Vec<(String, String)>,
}

impl Check {
    fn new(action: &str, resource: String) -> Check {
        Check { action: action.to_owned(), resource, context: Vec::new() }
    }

    /// The context as [`crate::iam::evaluate_in`] takes it.
    pub fn context(&self) -> Vec<(&str, &str)> {
        self.context.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }
}

/// A recognized S3 or Bedrock call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestCall {
    /// `s3` or `bedrock`.
    pub service: &'static str,
    /// The API operation (`PutObject`, `ListObjectsV2`, `CreateModelInvocationJob`).
    pub operation: String,
    /// What IAM checks, in order; the call goes on only if every one is allowed.
    pub checks: Vec<Check>,
}

/// The service a request is signed for: the fourth part of its SigV4 credential scope
/// (`Credential=AKID/20260101/us-east-1/s3/aws4_request`).
pub fn signing_service(headers: &HeaderMap) -> Option<String> {
    let authorization = headers.get("authorization")?.to_str().ok()?;
    let credential = authorization.split("Credential=").nth(1)?.split([',', ' ']).next()?;
    Some(credential.split('/').nth(3)?.to_owned())
}

/// The call, when `service` (the signing service) is `s3` or `bedrock` and the method and path
/// are an operation the rehearsal knows; `None` otherwise (the proxy refuses to serve it).
pub fn recognize(
    service: &str,
    method: &str,
    path: &str,
    query: Option<&str>,
    body: &[u8],
    region: &str,
    account: &str,
) -> Option<RestCall> {
    match service {
        "s3" => s3(method, path, query),
        "bedrock" => bedrock(method, path, body, region, account),
        _ => None,
    }
}

fn query_has(query: Option<&str>, name: &str) -> bool {
    query.unwrap_or_default().split('&').any(|pair| pair.split('=').next() == Some(name))
}

fn s3(method: &str, path: &str, query: Option<&str>) -> Option<RestCall> {
    let path = path.trim_start_matches('/');
    let (bucket, key) = match path.split_once('/') {
        Some((bucket, key)) => (bucket, percent_decode(key)),
        None => (path, String::new()),
    };
    if bucket.is_empty() {
        return None;
    }
    let bucket_arn = format!("arn:aws:s3:::{bucket}");
    let object_arn = format!("{bucket_arn}/{key}");
    let (operation, action, resource) = match (method, key.is_empty()) {
        ("PUT", false) => ("PutObject", "s3:PutObject", object_arn),
        // A multipart upload is authorized as the PutObject it makes.
        ("POST", false) if query_has(query, "uploads") || query_has(query, "uploadId") => {
            ("CreateMultipartUpload", "s3:PutObject", object_arn)
        }
        ("GET", false) => ("GetObject", "s3:GetObject", object_arn),
        ("HEAD", false) => ("HeadObject", "s3:GetObject", object_arn),
        ("DELETE", false) => ("DeleteObject", "s3:DeleteObject", object_arn),
        ("GET", true) if query_has(query, "list-type") => ("ListObjectsV2", "s3:ListBucket", bucket_arn),
        ("GET", true) if query.unwrap_or_default().is_empty() || query_has(query, "prefix") => {
            ("ListObjects", "s3:ListBucket", bucket_arn)
        }
        ("HEAD", true) => ("HeadBucket", "s3:ListBucket", bucket_arn),
        ("PUT", true) => ("CreateBucket", "s3:CreateBucket", bucket_arn),
        ("DELETE", true) => ("DeleteBucket", "s3:DeleteBucket", bucket_arn),
        _ => return None,
    };
    Some(RestCall {
        service: "s3",
        operation: operation.to_owned(),
        checks: vec![Check::new(action, resource)],
    })
}

/// The geographic prefixes of Bedrock's system-defined inference profiles (`us.anthropic...`).
const INFERENCE_PROFILE_PREFIXES: [&str; 8] =
    ["us.", "us-gov.", "eu.", "apac.", "ca.", "jp.", "au.", "global."];

/// The ARN IAM authorizes a `modelId` on: an ARN as given; a system inference profile's id as
/// the account's inference profile; else the region's foundation model.
pub fn model_arn(model_id: &str, region: &str, account: &str) -> String {
    if model_id.starts_with("arn:") {
        model_id.to_owned()
    } else if INFERENCE_PROFILE_PREFIXES.iter().any(|prefix| model_id.starts_with(prefix)) {
        format!("arn:aws:bedrock:{region}:{account}:inference-profile/{model_id}")
    } else {
        format!("arn:aws:bedrock:{region}::foundation-model/{model_id}")
    }
}

/// A batch job's ARN from the identifier a path names (its ARN, percent-encoded, or its id).
pub fn job_arn(identifier: &str, region: &str, account: &str) -> String {
    let identifier = percent_decode(identifier);
    if identifier.starts_with("arn:") {
        identifier
    } else {
        format!("arn:aws:bedrock:{region}:{account}:model-invocation-job/{identifier}")
    }
}

fn bedrock(method: &str, path: &str, body: &[u8], region: &str, account: &str) -> Option<RestCall> {
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let call = |operation: &str, checks: Vec<Check>| {
        Some(RestCall { service: "bedrock", operation: operation.to_owned(), checks })
    };
    match (method, parts.as_slice()) {
        ("POST", ["model-invocation-job"]) => {
            let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
            let text = |key: &str| request[key].as_str().unwrap_or_default().to_owned();
            // The job's id is Bedrock's to assign: IAM sees a job of this account and region
            // (named here by its jobName), which `model-invocation-job/*` covers.
            let job = job_arn(&text("jobName"), region, account);
            let mut pass_role = Check::new("iam:PassRole", text("roleArn"));
            pass_role.context.push(("iam:PassedToService".to_owned(), "bedrock.amazonaws.com".to_owned()));
            call(
                "CreateModelInvocationJob",
                vec![
                    Check::new(
                        "bedrock:CreateModelInvocationJob",
                        model_arn(&text("modelId"), region, account),
                    ),
                    Check::new("bedrock:CreateModelInvocationJob", job),
                    pass_role,
                ],
            )
        }
        ("GET", ["model-invocation-job", id]) => call(
            "GetModelInvocationJob",
            vec![Check::new("bedrock:GetModelInvocationJob", job_arn(id, region, account))],
        ),
        ("POST", ["model-invocation-job", id, "stop"]) => call(
            "StopModelInvocationJob",
            vec![Check::new("bedrock:StopModelInvocationJob", job_arn(id, region, account))],
        ),
        ("GET", ["model-invocation-jobs"]) => call(
            "ListModelInvocationJobs",
            vec![Check::new("bedrock:ListModelInvocationJobs", "*".to_owned())],
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iam::{evaluate_in, Statement};
    use serde_json::json;

    const REGION: &str = "us-east-1";
    const ACCOUNT: &str = "123456789012";
    const MODEL: &str = "arn:aws:bedrock:us-east-1::foundation-model/rehearsal.batch-model-v1:0";
    const ROLE: &str = "arn:aws:iam::123456789012:role/stack-BatchServiceRole";

    /// The sweeper's batch statements as template.yaml grants them (HasBedrockBatch), resolved.
    fn sweeper() -> Vec<Statement> {
        let jobs = format!("arn:aws:bedrock:{REGION}:{ACCOUNT}:model-invocation-job/*");
        let document = json!({"Statement": [
            {"Effect": "Allow", "Action": ["s3:PutObject", "s3:GetObject"], "Resource": "arn:aws:s3:::batch-bucket/*"},
            {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": "arn:aws:s3:::batch-bucket"},
            {"Effect": "Allow", "Action": ["bedrock:CreateModelInvocationJob"], "Resource": [MODEL]},
            {"Effect": "Allow", "Action": ["bedrock:CreateModelInvocationJob", "bedrock:GetModelInvocationJob",
                                           "bedrock:StopModelInvocationJob"], "Resource": jobs},
            {"Effect": "Allow", "Action": ["bedrock:ListModelInvocationJobs"], "Resource": "*"},
            {"Effect": "Allow", "Action": ["iam:PassRole"], "Resource": ROLE,
             "Condition": {"StringEquals": {"iam:PassedToService": "bedrock.amazonaws.com"}}}
        ]});
        Statement::from_document("SweeperFunctionRole policy 0", &document).unwrap()
    }

    /// Whether every permission the call needs is allowed, and the first refused one.
    fn judged(call: &RestCall, statements: &[Statement]) -> Result<(), Check> {
        for check in &call.checks {
            if !evaluate_in(statements, &check.action, &check.resource, &check.context()).is_allowed() {
                return Err(check.clone());
            }
        }
        Ok(())
    }

    fn s3_call(method: &str, path: &str, query: Option<&str>) -> RestCall {
        recognize("s3", method, path, query, b"", REGION, ACCOUNT).unwrap()
    }

    fn create(model: &str, role: &str) -> RestCall {
        let body = json!({"jobName": "aitasks-0b6f", "clientRequestToken": "0b6f", "roleArn": role,
                          "modelId": model, "modelInvocationType": "Converse"});
        recognize(
            "bedrock",
            "POST",
            "/model-invocation-job",
            None,
            body.to_string().as_bytes(),
            REGION,
            ACCOUNT,
        )
        .unwrap()
    }

    #[test]
    fn the_signing_service_names_the_api() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=AKID/20261202/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0"
                .parse()
                .unwrap(),
        );
        assert_eq!(signing_service(&headers).as_deref(), Some("s3"));
        headers.insert(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=AKID/20261202/us-east-1/bedrock/aws4_request,SignedHeaders=host,Signature=0"
                .parse()
                .unwrap(),
        );
        assert_eq!(signing_service(&headers).as_deref(), Some("bedrock"));
        assert_eq!(signing_service(&HeaderMap::new()), None);
    }

    #[test]
    fn s3_path_style_calls_map_to_their_actions_on_the_object_or_the_bucket() {
        let put = s3_call("PUT", "/batch-bucket/aitasks/0b6f/input.jsonl", None);
        assert_eq!(put.operation, "PutObject");
        assert_eq!(
            put.checks,
            vec![Check::new("s3:PutObject", "arn:aws:s3:::batch-bucket/aitasks/0b6f/input.jsonl".into())]
        );
        let get = s3_call("GET", "/batch-bucket/aitasks/0b6f/output/job%201/input.jsonl.out", None);
        assert_eq!(
            (get.operation.as_str(), get.checks[0].action.as_str(), get.checks[0].resource.as_str()),
            (
                "GetObject",
                "s3:GetObject",
                "arn:aws:s3:::batch-bucket/aitasks/0b6f/output/job 1/input.jsonl.out"
            ),
            "the key IAM sees is decoded"
        );
        let list = s3_call("GET", "/batch-bucket", Some("list-type=2&prefix=aitasks%2F0b6f%2Foutput%2F"));
        assert_eq!(list.operation, "ListObjectsV2");
        assert_eq!(list.checks, vec![Check::new("s3:ListBucket", "arn:aws:s3:::batch-bucket".into())]);
        let token = s3_call("GET", "/batch-bucket", Some("continuation-token=abc&list-type=2&prefix=p"));
        assert_eq!(token.operation, "ListObjectsV2");
        assert_eq!(s3_call("PUT", "/other-bucket", None).checks[0].action, "s3:CreateBucket");
        assert_eq!(s3_call("DELETE", "/batch-bucket/k", None).checks[0].action, "s3:DeleteObject");
        assert!(recognize("s3", "GET", "/", None, b"", REGION, ACCOUNT).is_none());
        assert!(recognize("s3", "POST", "/batch-bucket", Some("delete"), b"", REGION, ACCOUNT).is_none());
    }

    #[test]
    fn bedrock_control_plane_calls_map_to_the_model_the_job_and_the_role_passed() {
        let created = create("rehearsal.batch-model-v1:0", ROLE);
        assert_eq!(created.operation, "CreateModelInvocationJob");
        assert_eq!(
            created.checks,
            vec![
                Check::new("bedrock:CreateModelInvocationJob", MODEL.into()),
                Check::new(
                    "bedrock:CreateModelInvocationJob",
                    "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/aitasks-0b6f".into()
                ),
                Check {
                    action: "iam:PassRole".into(),
                    resource: ROLE.into(),
                    context: vec![("iam:PassedToService".into(), "bedrock.amazonaws.com".into())],
                },
            ]
        );
        assert_eq!(
            create("us.anthropic.claude-3-haiku-20240307-v1:0", ROLE).checks[0].resource,
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-haiku-20240307-v1:0"
        );
        let arn = "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/stubjob00001";
        let encoded = "arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Amodel-invocation-job%2Fstubjob00001";
        let get = recognize(
            "bedrock",
            "GET",
            &format!("/model-invocation-job/{encoded}"),
            None,
            b"",
            REGION,
            ACCOUNT,
        )
        .unwrap();
        assert_eq!(get.checks, vec![Check::new("bedrock:GetModelInvocationJob", arn.into())]);
        let by_id =
            recognize("bedrock", "GET", "/model-invocation-job/stubjob00001", None, b"", REGION, ACCOUNT)
                .unwrap();
        assert_eq!(by_id.checks, get.checks, "an id names the same job as its ARN");
        let stop = recognize(
            "bedrock",
            "POST",
            &format!("/model-invocation-job/{encoded}/stop"),
            None,
            b"",
            REGION,
            ACCOUNT,
        )
        .unwrap();
        assert_eq!(stop.checks, vec![Check::new("bedrock:StopModelInvocationJob", arn.into())]);
        assert!(
            recognize("bedrock", "DELETE", "/model-invocation-job/x", None, b"", REGION, ACCOUNT).is_none()
        );
        assert!(recognize("sqs", "POST", "/", None, b"", REGION, ACCOUNT).is_none());
    }

    /// What the template grants the sweeper allows the batcher's calls, and nothing beside them:
    /// another bucket, another model, another role, a role passed without Bedrock as its
    /// service, a call the sweeper has no grant for.
    #[test]
    fn calls_outside_the_sweeper_s_grants_are_refused() {
        let statements = sweeper();
        let allowed = [
            s3_call("PUT", "/batch-bucket/aitasks/0b6f/input.jsonl", None),
            s3_call("GET", "/batch-bucket/aitasks/0b6f/output/j/input.jsonl.out", None),
            s3_call("GET", "/batch-bucket", Some("list-type=2&prefix=aitasks%2F0b6f%2F")),
            create(MODEL, ROLE),
            create("rehearsal.batch-model-v1:0", ROLE),
            recognize("bedrock", "GET", "/model-invocation-job/j1", None, b"", REGION, ACCOUNT).unwrap(),
            recognize("bedrock", "POST", "/model-invocation-job/j1/stop", None, b"", REGION, ACCOUNT)
                .unwrap(),
        ];
        for call in &allowed {
            assert_eq!(judged(call, &statements), Ok(()), "{call:?}");
        }
        let refused = |call: RestCall, action: &str, resource: &str| {
            let check = judged(&call, &statements).expect_err("refused");
            assert_eq!((check.action.as_str(), check.resource.as_str()), (action, resource), "{call:?}");
        };
        refused(s3_call("PUT", "/other-bucket/k", None), "s3:PutObject", "arn:aws:s3:::other-bucket/k");
        refused(
            s3_call("GET", "/other-bucket", Some("list-type=2")),
            "s3:ListBucket",
            "arn:aws:s3:::other-bucket",
        );
        refused(s3_call("DELETE", "/batch-bucket/k", None), "s3:DeleteObject", "arn:aws:s3:::batch-bucket/k");
        refused(s3_call("PUT", "/batch-bucket", None), "s3:CreateBucket", "arn:aws:s3:::batch-bucket");
        refused(
            create("anthropic.claude-3-opus-20240229-v1:0", ROLE),
            "bedrock:CreateModelInvocationJob",
            "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-opus-20240229-v1:0",
        );
        let admin = "arn:aws:iam::123456789012:role/admin";
        refused(create(MODEL, admin), "iam:PassRole", admin);
        // A job of another account or region is not the sweeper's.
        let foreign = "arn%3Aaws%3Abedrock%3Aeu-west-1%3A999999999999%3Amodel-invocation-job%2Fj";
        refused(
            recognize(
                "bedrock",
                "GET",
                &format!("/model-invocation-job/{foreign}"),
                None,
                b"",
                REGION,
                ACCOUNT,
            )
            .unwrap(),
            "bedrock:GetModelInvocationJob",
            "arn:aws:bedrock:eu-west-1:999999999999:model-invocation-job/j",
        );
        // Listing the jobs (a batch given up while submitting is looked up by its job name) is
        // the sweeper's: a list action, on "*".
        let list = recognize(
            "bedrock",
            "GET",
            "/model-invocation-jobs",
            Some("nameContains=aitasks-x"),
            b"",
            REGION,
            ACCOUNT,
        );
        assert_eq!(judged(&list.unwrap(), &statements), Ok(()));
        // The role passed to another service, or with no service named, is refused.
        let mut pass = create(MODEL, ROLE).checks.remove(2);
        assert!(evaluate_in(&statements, &pass.action, &pass.resource, &pass.context()).is_allowed());
        pass.context[0].1 = "lambda.amazonaws.com".into();
        assert!(!evaluate_in(&statements, &pass.action, &pass.resource, &pass.context()).is_allowed());
        assert!(!evaluate_in(&statements, &pass.action, &pass.resource, &[]).is_allowed());
    }
}
