//! The events each trigger of the stack delivers, in AWS's own shapes: API Gateway HTTP API
//! (payload 2.0) requests with the JWT authorizer's claims, SQS deliveries from the event source
//! mapping, EventBridge Scheduler invocations (the target's input as is), an EventBridge rule's
//! event (a Bedrock batch job's state change) and CloudFormation custom-resource requests.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::deployment::{CustomResource, EventRule, Route};
use crate::local_aws::REGION;

pub const ACCOUNT: &str = "123456789012";

/// The event EventBridge delivers for `rule`: one its pattern matches (the first `source` and
/// `detail-type` it names), in the shape of Bedrock's batch job state change for the job `job`
/// (`resources` and `detail.batchJobArn` name it) ending `status`.
pub fn rule_event(rule: &EventRule, job: &str, status: &str) -> Value {
    let first = |key: &str| rule.pattern[key][0].as_str().unwrap_or("rehearsal").to_owned();
    json!({
        "version": "0", "id": uuid::Uuid::new_v4().to_string(),
        "detail-type": first("detail-type"), "source": first("source"),
        "account": ACCOUNT, "time": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "region": REGION, "resources": [job],
        "detail": {"batchJobName": "aitasks-rehearsal", "batchJobArn": job, "status": status}
    })
}

/// An HTTP API request to `route`, with the concrete `method` (an `ANY` route's caller picks
/// one) and `path`, from tenant `tenant`. The claims
/// are what the JWT authorizer passes on once it has verified a token from the configured
/// issuer for the configured audience.
pub fn http_request(
    route: &Route,
    method: &str,
    path: &str,
    query: &[(&str, &str)],
    body: Option<&Value>,
    app_token_field: &str,
    tenant: &str,
) -> Value {
    let now = chrono::Utc::now();
    let mut claims = json!({
        "sub": format!("{tenant}-caller"),
        "iat": now.timestamp().to_string(),
        "exp": (now.timestamp() + 3600).to_string(),
    });
    if let Some(authorizer) = &route.authorizer {
        claims["iss"] = json!(authorizer.issuer);
        // API Gateway renders a list claim as "[a b]".
        claims["aud"] = json!(format!("[{}]", authorizer.audience.join(" ")));
    }
    claims[app_token_field] = json!(tenant);
    let route_key = format!("{} {}", route.method, route.path);
    let mut path_parameters = BTreeMap::new();
    for (template, actual) in route.path.split('/').zip(path.split('/')) {
        if let Some(name) = template.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
            path_parameters.insert(name.to_owned(), actual.to_owned());
        }
    }
    let raw_query: Vec<String> = query
        .iter()
        .map(|(k, v)| {
            format!("{k}={}", percent_encoding::utf8_percent_encode(v, percent_encoding::NON_ALPHANUMERIC))
        })
        .collect();
    let query_parameters: BTreeMap<&str, &str> = query.iter().copied().collect();
    let mut event = json!({
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": path,
        "rawQueryString": raw_query.join("&"),
        "headers": {
            "authorization": "Bearer rehearsal.jwt.verified-by-the-authorizer",
            "content-type": "application/json",
            "host": "rehearsalapi.execute-api.us-east-1.amazonaws.com",
            "user-agent": "aitasks-rehearsal",
        },
        "requestContext": {
            "accountId": ACCOUNT,
            "apiId": "rehearsalapi",
            "authorizer": {"jwt": {"claims": claims, "scopes": null}},
            "domainName": "rehearsalapi.execute-api.us-east-1.amazonaws.com",
            "domainPrefix": "rehearsalapi",
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1",
                     "sourceIp": "127.0.0.1", "userAgent": "aitasks-rehearsal"},
            "requestId": uuid::Uuid::new_v4().to_string(),
            "routeKey": route_key,
            "stage": "$default",
            "time": now.format("%d/%b/%Y:%H:%M:%S +0000").to_string(),
            "timeEpoch": now.timestamp_millis(),
        },
        "isBase64Encoded": false,
    });
    if !path_parameters.is_empty() {
        event["pathParameters"] = json!(path_parameters);
    }
    if !query.is_empty() {
        event["queryStringParameters"] = json!(query_parameters);
    }
    if let Some(body) = body {
        event["body"] = json!(body.to_string());
    }
    event
}

/// The SQS event the event source mapping delivers for received messages.
pub fn sqs_batch(queue_arn: &str, messages: &[aws_sdk_sqs::types::Message]) -> Value {
    let records: Vec<Value> = messages
        .iter()
        .map(|message| {
            let attributes: BTreeMap<String, String> = message
                .attributes()
                .map(|a| a.iter().map(|(k, v)| (k.as_str().to_owned(), v.clone())).collect())
                .unwrap_or_default();
            json!({
                "messageId": message.message_id(),
                "receiptHandle": message.receipt_handle(),
                "body": message.body(),
                "attributes": attributes,
                "messageAttributes": {},
                "md5OfBody": message.md5_of_body(),
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": REGION,
            })
        })
        .collect();
    json!({"Records": records})
}

/// A CloudFormation custom-resource request.
pub fn custom_resource_request(
    resource: &CustomResource,
    request_type: &str,
    response_url: &str,
    stack_id: &str,
    physical_id: Option<&str>,
) -> Value {
    let mut event = json!({
        "RequestType": request_type,
        "ServiceToken": resource.properties["ServiceToken"],
        "ResponseURL": response_url,
        "StackId": stack_id,
        "RequestId": uuid::Uuid::new_v4().to_string(),
        "LogicalResourceId": resource.logical_id,
        "ResourceType": resource.resource_type,
        "ResourceProperties": resource.properties,
    });
    if let Some(physical_id) = physical_id {
        event["PhysicalResourceId"] = json!(physical_id);
    }
    if request_type == "Update" {
        event["OldResourceProperties"] = resource.properties.clone();
    }
    event
}
