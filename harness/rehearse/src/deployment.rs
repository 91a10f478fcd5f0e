//! What the stack gives each function once deployed, read from the resolved template (the SAM
//! transform and every intrinsic function already applied by `harness/rehearse/resolve.py`):
//! its environment, timeout, memory, logging, role statements, and the event sources that
//! invoke it.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::iam::{managed_policy, Statement};
use crate::Failure;

/// One `AWS::Lambda::Function`.
#[derive(Debug, Clone)]
pub struct Function {
    pub logical_id: String,
    pub name: String,
    pub arn: String,
    /// The cargo-lambda binary (`Metadata.BuildProperties.Binary`).
    pub binary: String,
    pub environment: BTreeMap<String, String>,
    pub timeout_seconds: u64,
    pub memory_mb: u64,
    pub log_format: Option<String>,
    pub application_log_level: Option<String>,
    pub tracing: Option<String>,
    pub reserved_concurrency: Option<u64>,
    /// Where Lambda sends an asynchronous invocation that failed every retry
    /// (`DeadLetterConfig.TargetArn`).
    pub dead_letter_target: Option<String>,
    pub role_arn: String,
    /// Inline policies first, then managed policies, each statement labeled with its source.
    pub statements: Vec<Statement>,
    pub managed_policies: Vec<String>,
}

/// An HTTP API route and the function it invokes.
#[derive(Debug, Clone)]
pub struct Route {
    pub method: String,
    /// The OpenAPI path, `{name}` for path parameters.
    pub path: String,
    pub function: String,
    pub payload_format: String,
    pub authorizer: Option<JwtAuthorizer>,
}

/// The HTTP API's JWT authorizer.
#[derive(Debug, Clone)]
pub struct JwtAuthorizer {
    pub issuer: String,
    pub audience: Vec<String>,
    pub identity_source: String,
}

/// An SQS event source mapping.
#[derive(Debug, Clone)]
pub struct QueueMapping {
    pub logical_id: String,
    pub function: String,
    pub queue_arn: String,
    pub batch_size: usize,
    /// `MaximumBatchingWindowInSeconds` (0 when unset, as Lambda's default).
    pub batching_window_seconds: u64,
    /// `ScalingConfig.MaximumConcurrency`.
    pub maximum_concurrency: Option<u64>,
    pub report_batch_item_failures: bool,
}

/// An EventBridge Scheduler schedule targeting a function.
#[derive(Debug, Clone)]
pub struct Schedule {
    pub logical_id: String,
    pub function: String,
    pub expression: String,
    pub input: Value,
}

/// An EventBridge rule with a function of the stack as a target.
#[derive(Debug, Clone)]
pub struct EventRule {
    pub logical_id: String,
    pub arn: String,
    pub function: String,
    /// The rule's `EventPattern`.
    pub pattern: Value,
    /// Whether an `AWS::Lambda::Permission` lets `events.amazonaws.com` invoke the function from
    /// this rule (its `SourceArn` the rule's ARN): without one, EventBridge's invocations fail
    /// and the function never hears of the events, though the stack deploys.
    pub permitted: bool,
}

/// A CloudFormation custom resource backed by a function.
#[derive(Debug, Clone)]
pub struct CustomResource {
    pub logical_id: String,
    pub resource_type: String,
    pub function: String,
    pub properties: Value,
}

/// An `AWS::SQS::Queue` with the attributes the template gives it.
#[derive(Debug, Clone)]
pub struct QueueSpec {
    pub logical_id: String,
    pub arn: String,
    pub attributes: BTreeMap<String, String>,
}

impl QueueSpec {
    /// `VisibilityTimeout` in seconds; SQS's default (30) when the template sets none.
    pub fn visibility_timeout_seconds(&self) -> u64 {
        self.attributes.get("VisibilityTimeout").and_then(|v| v.trim().parse().ok()).unwrap_or(30)
    }

    pub fn is_fifo(&self) -> bool {
        self.attributes.get("FifoQueue").is_some_and(|v| v == "true") || self.arn.ends_with(".fifo")
    }
}

/// The whole stack as deployed.
#[derive(Debug, Clone, Default)]
pub struct Deployment {
    pub functions: BTreeMap<String, Function>,
    pub routes: Vec<Route>,
    pub queue_mappings: Vec<QueueMapping>,
    pub schedules: Vec<Schedule>,
    pub event_rules: Vec<EventRule>,
    pub custom_resources: Vec<CustomResource>,
    pub queues: Vec<QueueSpec>,
    pub resource_types: BTreeMap<String, String>,
    pub resolved: Value,
}

/// Run the SAM transform and resolve the template for a local stack description.
pub fn resolve(python: &Path, root: &Path, template: &Path, local_stack: &Value) -> Result<Value, Failure> {
    let input = tempfile_path("local-stack", "json");
    std::fs::write(&input, serde_json::to_vec(local_stack)?)?;
    let output = Command::new(python)
        .arg(root.join("harness/rehearse/resolve.py"))
        .arg(template)
        .arg(&input)
        .env("AWS_DEFAULT_REGION", local_stack["region"].as_str().unwrap_or("us-east-1"))
        .env("SAM_CLI_TELEMETRY", "0")
        .output()?;
    let _ = std::fs::remove_file(&input);
    if !output.status.success() {
        return Err(format!(
            "the SAM transform of {} failed: {}",
            template.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        )
        .into());
    }
    Ok(serde_json::from_slice(&output.stdout)?)
}

fn tempfile_path(stem: &str, extension: &str) -> std::path::PathBuf {
    std::env::temp_dir()
        .join(format!("aitasks-rehearsal-{stem}-{}.{extension}", uuid::Uuid::new_v4().simple()))
}

/// A number, whether the template wrote it as one or a parameter resolved it to a string.
fn number(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| value.as_str().and_then(|s| s.trim().parse().ok()))
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

impl Deployment {
    /// Read the resolved template.
    pub fn from_resolved(resolved: Value) -> Result<Deployment, Failure> {
        let resources = resolved["Resources"].as_object().ok_or("the resolved template has no Resources")?;
        let mut deployment = Deployment { resolved: resolved.clone(), ..Deployment::default() };
        for (id, resource) in resources {
            deployment.resource_types.insert(id.clone(), text(&resource["Type"]));
        }
        let arn_to_function: BTreeMap<String, String> = resources
            .iter()
            .filter(|(_, r)| r["Type"] == "AWS::Lambda::Function")
            .filter_map(|(id, r)| Some((r["Arn"].as_str()?.to_owned(), id.clone())))
            .collect();
        let function_of = |reference: &str| -> Option<String> {
            // A function ARN, a qualified one (alias or version), or the function's name.
            arn_to_function
                .iter()
                .find(|(arn, _)| reference == arn.as_str() || reference.starts_with(&format!("{arn}:")))
                .map(|(_, id)| id.clone())
                .or_else(|| {
                    resources
                        .iter()
                        .find(|(_, r)| r["Type"] == "AWS::Lambda::Function" && r["PhysicalId"] == reference)
                        .map(|(id, _)| id.clone())
                })
        };

        for (id, resource) in resources {
            let properties = &resource["Properties"];
            match resource["Type"].as_str().unwrap_or_default() {
                "AWS::Lambda::Function" => {
                    let function = read_function(id, resource, resources)?;
                    deployment.functions.insert(id.clone(), function);
                }
                "AWS::Lambda::EventSourceMapping" => {
                    let function = function_of(&text(&properties["FunctionName"]))
                        .ok_or_else(|| format!("{id}: FunctionName names no function of the stack"))?;
                    let responses =
                        properties["FunctionResponseTypes"].as_array().cloned().unwrap_or_default();
                    deployment.queue_mappings.push(QueueMapping {
                        logical_id: id.clone(),
                        function,
                        queue_arn: text(&properties["EventSourceArn"]),
                        batch_size: number(&properties["BatchSize"]).unwrap_or(10) as usize,
                        batching_window_seconds: number(&properties["MaximumBatchingWindowInSeconds"])
                            .unwrap_or(0),
                        maximum_concurrency: number(&properties["ScalingConfig"]["MaximumConcurrency"]),
                        report_batch_item_failures: responses.iter().any(|r| r == "ReportBatchItemFailures"),
                    });
                }
                "AWS::Scheduler::Schedule" => {
                    let target = &properties["Target"];
                    let function = function_of(&text(&target["Arn"]))
                        .ok_or_else(|| format!("{id}: the schedule's target is no function of the stack"))?;
                    let input = match target.get("Input") {
                        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
                        _ => Value::Object(Default::default()),
                    };
                    deployment.schedules.push(Schedule {
                        logical_id: id.clone(),
                        function,
                        expression: text(&properties["ScheduleExpression"]),
                        input,
                    });
                }
                "AWS::Events::Rule" => {
                    let arn = text(&resource["Arn"]);
                    for target in properties["Targets"].as_array().into_iter().flatten() {
                        let Some(function) = function_of(&text(&target["Arn"])) else { continue };
                        let permitted = resources.values().any(|r| {
                            let p = &r["Properties"];
                            r["Type"] == "AWS::Lambda::Permission"
                                && text(&p["Principal"]) == "events.amazonaws.com"
                                && text(&p["Action"]) == "lambda:InvokeFunction"
                                && text(&p["SourceArn"]) == arn
                                && function_of(&text(&p["FunctionName"])).as_deref()
                                    == Some(function.as_str())
                        });
                        deployment.event_rules.push(EventRule {
                            logical_id: id.clone(),
                            arn: arn.clone(),
                            function,
                            pattern: properties["EventPattern"].clone(),
                            permitted,
                        });
                    }
                }
                "AWS::ApiGatewayV2::Api" => {
                    deployment.routes.extend(read_routes(id, properties, &function_of)?);
                }
                "AWS::SQS::Queue" => {
                    let attributes = properties
                        .as_object()
                        .map(|map| {
                            map.iter()
                                .filter(|(k, _)| k.as_str() != "Tags" && k.as_str() != "QueueName")
                                .map(|(k, v)| {
                                    let value = if v.is_object() { v.to_string() } else { text(v) };
                                    (k.clone(), value)
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    deployment.queues.push(QueueSpec {
                        logical_id: id.clone(),
                        arn: text(&resource["Arn"]),
                        attributes,
                    });
                }
                kind if kind.starts_with("Custom::") || kind == "AWS::CloudFormation::CustomResource" => {
                    let function = function_of(&text(&properties["ServiceToken"]))
                        .ok_or_else(|| format!("{id}: ServiceToken names no function of the stack"))?;
                    deployment.custom_resources.push(CustomResource {
                        logical_id: id.clone(),
                        resource_type: kind.to_owned(),
                        function,
                        properties: properties.clone(),
                    });
                }
                _ => {}
            }
        }
        Ok(deployment)
    }
}

fn read_function(
    id: &str,
    resource: &Value,
    resources: &serde_json::Map<String, Value>,
) -> Result<Function, Failure> {
    let properties = &resource["Properties"];
    let binary = resource["Metadata"]["BuildProperties"]["Binary"]
        .as_str()
        .ok_or_else(|| format!("{id}: no Metadata.BuildProperties.Binary (cargo-lambda's binary)"))?
        .to_owned();
    let environment = properties["Environment"]["Variables"]
        .as_object()
        .map(|vars| vars.iter().map(|(k, v)| (k.clone(), text(v))).collect())
        .unwrap_or_default();
    let role_arn = text(&properties["Role"]);
    let (role_id, role) = resources
        .iter()
        .find(|(_, r)| {
            r["Type"] == "AWS::IAM::Role"
                && r["Properties"].is_object()
                && role_arn.ends_with(&format!("/{}", text(&r["PhysicalId"])))
        })
        .ok_or_else(|| format!("{id}: its Role {role_arn} is not a role of the stack"))?;
    let mut statements = Vec::new();
    for policy in role["Properties"]["Policies"].as_array().into_iter().flatten() {
        let name = text(&policy["PolicyName"]);
        statements.extend(Statement::from_document(
            &format!("{role_id} policy {name}"),
            &policy["PolicyDocument"],
        )?);
    }
    let managed_policies: Vec<String> =
        role["Properties"]["ManagedPolicyArns"].as_array().into_iter().flatten().map(text).collect();
    for arn in &managed_policies {
        let document = managed_policy(arn).ok_or_else(|| {
            format!("{id}: managed policy {arn} is not one the rehearsal knows; add its document to iam.rs")
        })?;
        let name = arn.rsplit('/').next().unwrap_or(arn);
        statements.extend(Statement::from_document(&format!("managed policy {name}"), &document)?);
    }
    Ok(Function {
        logical_id: id.to_owned(),
        name: text(&resource["PhysicalId"]),
        arn: text(&resource["Arn"]),
        binary,
        environment,
        timeout_seconds: number(&properties["Timeout"]).unwrap_or(3),
        memory_mb: number(&properties["MemorySize"]).unwrap_or(128),
        log_format: properties["LoggingConfig"]["LogFormat"].as_str().map(str::to_owned),
        application_log_level: properties["LoggingConfig"]["ApplicationLogLevel"].as_str().map(str::to_owned),
        tracing: properties["TracingConfig"]["Mode"].as_str().map(str::to_owned),
        reserved_concurrency: number(&properties["ReservedConcurrentExecutions"]),
        dead_letter_target: properties["DeadLetterConfig"]["TargetArn"].as_str().map(str::to_owned),
        role_arn,
        statements,
        managed_policies,
    })
}

fn read_routes(
    api_id: &str,
    properties: &Value,
    function_of: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Route>, Failure> {
    let body = &properties["Body"];
    let mut authorizers = BTreeMap::new();
    for (name, scheme) in body["components"]["securitySchemes"].as_object().into_iter().flatten() {
        let authorizer = &scheme["x-amazon-apigateway-authorizer"];
        if authorizer["type"] == "jwt" {
            let audience = match &authorizer["jwtConfiguration"]["audience"] {
                Value::Array(list) => list.iter().map(text).collect(),
                one => vec![text(one)],
            };
            authorizers.insert(
                name.clone(),
                JwtAuthorizer {
                    issuer: text(&authorizer["jwtConfiguration"]["issuer"]),
                    audience,
                    identity_source: text(&authorizer["identitySource"]),
                },
            );
        }
    }
    let mut routes = Vec::new();
    for (path, item) in body["paths"].as_object().into_iter().flatten() {
        for (method, operation) in item.as_object().into_iter().flatten() {
            let integration = &operation["x-amazon-apigateway-integration"];
            let uri = text(&integration["uri"]);
            let function_arn = uri
                .split("/functions/")
                .nth(1)
                .and_then(|rest| rest.strip_suffix("/invocations"))
                .ok_or_else(|| format!("{api_id} {method} {path}: integration {uri} invokes no function"))?;
            let function = function_of(function_arn).ok_or_else(|| {
                format!("{api_id} {method} {path}: {function_arn} is no function of the stack")
            })?;
            let authorizer = operation["security"]
                .as_array()
                .and_then(|list| list.first())
                .and_then(Value::as_object)
                .and_then(|requirement| requirement.keys().next())
                .and_then(|name| authorizers.get(name).cloned());
            // SAM writes `Method: ANY` as API Gateway's own extension method.
            let method = if method == "x-amazon-apigateway-any-method" {
                "ANY".to_owned()
            } else {
                method.to_uppercase()
            };
            routes.push(Route {
                method,
                path: path.clone(),
                function,
                payload_format: text(&integration["payloadFormatVersion"]),
                authorizer,
            });
        }
    }
    Ok(routes)
}
