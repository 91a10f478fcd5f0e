//! IAM identity-policy evaluation for one role: is `action` on `resource` allowed, and by which
//! statement? As IAM decides it: an explicit `Deny` wins, else any matching `Allow` allows,
//! else the call is denied implicitly. `Action`/`NotAction` match case-insensitively and
//! `Resource`/`NotResource` case-sensitively, both with the `*` and `?` wildcards.
//!
//! Conditions are evaluated against the request context the caller passes
//! ([`evaluate_in`]: `iam:PassedToService` for a role passed to a service) with the string and
//! ARN operators (`StringEquals`, `StringLike`, `ArnEquals`, `ArnLike`, `Bool`). A condition
//! the rehearsal cannot evaluate (another operator, or a key the context does not carry, such
//! as `aws:SecureTransport`) is never in the caller's favour: an `Allow` under it is treated as
//! not matching and a `Deny` under it as matching, so the verdict can only be stricter than
//! AWS's. moto's own IAM enforcement ignores resources, which is why
//! the rehearsal judges calls here instead.

use serde_json::Value;

/// Where a statement comes from, for the report: an inline policy's statement, or a managed
/// policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    pub source: String,
    pub allow: bool,
    actions: Patterns,
    resources: Patterns,
    /// The statement's `Condition` block, `Null` when it has none.
    condition: Value,
}

/// `Action` (the listed patterns) or `NotAction` (everything else); the same for resources.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Patterns {
    negated: bool,
    patterns: Vec<String>,
}

impl Patterns {
    fn from_statement(statement: &Value, key: &str, not_key: &str) -> Result<Patterns, String> {
        let (value, negated) = match (statement.get(key), statement.get(not_key)) {
            (Some(value), None) => (value, false),
            (None, Some(value)) => (value, true),
            _ => return Err(format!("a statement needs exactly one of {key} and {not_key}: {statement}")),
        };
        let patterns = match value {
            Value::String(one) => vec![one.clone()],
            Value::Array(many) => many
                .iter()
                .map(|v| v.as_str().map(str::to_owned).ok_or_else(|| format!("{key} must hold strings: {v}")))
                .collect::<Result<_, _>>()?,
            other => return Err(format!("{key} must be a string or a list: {other}")),
        };
        Ok(Patterns { negated, patterns })
    }

    fn matches(&self, text: &str, ignore_case: bool) -> bool {
        self.negated != self.patterns.iter().any(|p| wildcard_match(p, text, ignore_case))
    }
}

impl Statement {
    /// The statements of one policy document.
    pub fn from_document(source: &str, document: &Value) -> Result<Vec<Statement>, String> {
        let statements = match &document["Statement"] {
            Value::Array(list) => list.clone(),
            Value::Object(_) => vec![document["Statement"].clone()],
            other => return Err(format!("{source}: Statement must be a list or an object: {other}")),
        };
        statements
            .iter()
            .enumerate()
            .map(|(index, statement)| {
                let label = match statement.get("Sid").and_then(Value::as_str) {
                    Some(sid) => format!("{source} statement {sid}"),
                    None => format!("{source} statement {}", index + 1),
                };
                let allow = match statement["Effect"].as_str() {
                    Some("Allow") => true,
                    Some("Deny") => false,
                    _ => return Err(format!("{label}: Effect must be Allow or Deny")),
                };
                Ok(Statement {
                    source: label,
                    allow,
                    actions: Patterns::from_statement(statement, "Action", "NotAction")?,
                    resources: Patterns::from_statement(statement, "Resource", "NotResource")?,
                    condition: statement.get("Condition").cloned().unwrap_or(Value::Null),
                })
            })
            .collect()
    }

    fn applies(&self, action: &str, resource: &str) -> bool {
        self.actions.matches(action, true) && self.resources.matches(resource, false)
    }

    /// Whether the statement's conditions hold in `context`: `Some(true)` without any, `None`
    /// when one uses an operator the rehearsal does not evaluate or a key `context` lacks.
    fn conditions_hold(&self, context: &[(&str, &str)]) -> Option<bool> {
        let Some(operators) = self.condition.as_object() else { return Some(true) };
        let mut holds = true;
        for (operator, keys) in operators {
            let (ignore_case, wildcards) = match operator.as_str() {
                "StringEquals" => (false, false),
                "StringEqualsIgnoreCase" | "Bool" => (true, false),
                // IAM matches both ARN operators with wildcards.
                "StringLike" | "ArnLike" | "ArnEquals" => (false, true),
                _ => return None,
            };
            for (key, wanted) in keys.as_object()? {
                let wanted: Vec<String> = match wanted {
                    Value::Array(list) => list.iter().map(condition_text).collect(),
                    one => vec![condition_text(one)],
                };
                // Condition keys are case-insensitive.
                let value = context.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| *v)?;
                holds &= wanted.iter().any(|w| {
                    if wildcards {
                        wildcard_match(w, value, ignore_case)
                    } else if ignore_case {
                        w.eq_ignore_ascii_case(value)
                    } else {
                        w == value
                    }
                });
            }
        }
        Some(holds)
    }
}

/// A condition value as IAM compares it (booleans and numbers as their text).
fn condition_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The verdict on one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Allowed by this statement (the first that allows it).
    Allowed(String),
    /// Denied by this statement.
    ExplicitlyDenied(String),
    /// No statement allows it.
    ImplicitlyDenied,
}

impl Decision {
    pub fn is_allowed(&self) -> bool {
        matches!(self, Decision::Allowed(_))
    }
}

/// Evaluate `action` on `resource` against a role's statements, with no request context.
pub fn evaluate(statements: &[Statement], action: &str, resource: &str) -> Decision {
    evaluate_in(statements, action, resource, &[])
}

/// Evaluate `action` on `resource` in a request `context` (condition key, value).
pub fn evaluate_in(
    statements: &[Statement],
    action: &str,
    resource: &str,
    context: &[(&str, &str)],
) -> Decision {
    // A Deny under a condition the rehearsal cannot evaluate counts as matching (stricter).
    if let Some(deny) = statements
        .iter()
        .find(|s| !s.allow && s.applies(action, resource) && s.conditions_hold(context).unwrap_or(true))
    {
        return Decision::ExplicitlyDenied(deny.source.clone());
    }
    statements
        .iter()
        .find(|s| s.allow && s.applies(action, resource) && s.conditions_hold(context).unwrap_or(false))
        .map(|s| Decision::Allowed(s.source.clone()))
        .unwrap_or(Decision::ImplicitlyDenied)
}

/// IAM's wildcard match: `*` any run of characters, `?` any one character.
pub fn wildcard_match(pattern: &str, text: &str, ignore_case: bool) -> bool {
    let fold = |s: &str| if ignore_case { s.to_lowercase() } else { s.to_owned() };
    let (pattern, text): (Vec<char>, Vec<char>) =
        (fold(pattern).chars().collect(), fold(text).chars().collect());
    // Iterative matching with backtracking to the last `*`.
    let (mut p, mut t, mut star, mut mark) = (0, 0, None, 0);
    while t < text.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == text[t]) {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some(p);
            mark = t;
            p += 1;
        } else if let Some(s) = star {
            p = s + 1;
            mark += 1;
            t = mark;
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

/// The AWS managed policies SAM attaches to function roles, as AWS publishes them. An ARN not
/// listed here cannot be judged: the rehearsal refuses it rather than guess.
pub fn managed_policy(arn: &str) -> Option<Value> {
    let name = arn.rsplit('/').next()?;
    let logs = serde_json::json!({
        "Effect": "Allow",
        "Action": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
        "Resource": "*"
    });
    let statements = match name {
        "AWSLambdaBasicExecutionRole" => vec![logs],
        "AWSLambdaVPCAccessExecutionRole" => vec![
            logs,
            serde_json::json!({
                "Effect": "Allow",
                "Action": ["ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets",
                           "ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses",
                           "ec2:UnassignPrivateIpAddresses"],
                "Resource": "*"
            }),
        ],
        "AWSLambdaSQSQueueExecutionRole" => vec![
            serde_json::json!({
                "Effect": "Allow",
                "Action": ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"],
                "Resource": "*"
            }),
            logs,
        ],
        "AWSXrayWriteOnlyAccess" => vec![serde_json::json!({
            "Effect": "Allow",
            "Action": ["xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules",
                       "xray:GetSamplingTargets", "xray:GetSamplingStatisticSummaries"],
            "Resource": "*"
        })],
        _ => return None,
    };
    Some(serde_json::json!({"Version": "2012-10-17", "Statement": statements}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wildcards_match_as_iam_does() {
        assert!(wildcard_match("sqs:*", "sqs:SendMessage", true));
        assert!(wildcard_match("SQS:send*", "sqs:SendMessage", true));
        assert!(!wildcard_match("sqs:Send", "sqs:SendMessage", true));
        assert!(wildcard_match("arn:aws:sqs:*:*:tasks-?", "arn:aws:sqs:us-east-1:1:tasks-a", false));
        assert!(!wildcard_match("arn:aws:sqs:*:*:Tasks", "arn:aws:sqs:us-east-1:1:tasks", false));
        assert!(wildcard_match(
            "arn:aws:secretsmanager:*:*:secret:db-*",
            "arn:aws:secretsmanager:r:1:secret:db-AbC123",
            false
        ));
        assert!(wildcard_match("*", "", false));
        assert!(!wildcard_match("a*b", "acd", false));
    }

    #[test]
    fn deny_wins_allow_needs_a_match_and_conditions_only_tighten() {
        let document = json!({"Statement": [
            {"Effect": "Allow", "Action": ["sqs:SendMessage"], "Resource": "arn:aws:sqs:r:1:tasks"},
            {"Sid": "NoDlq", "Effect": "Deny", "Action": "sqs:*", "Resource": "arn:aws:sqs:r:1:dlq"},
            {"Effect": "Allow", "Action": "sqs:*", "Resource": "*", "Condition": {"Bool": {"aws:SecureTransport": "true"}}},
            {"Effect": "Allow", "NotAction": "sqs:*", "Resource": "arn:aws:s3:::bucket/*"}
        ]});
        let statements = Statement::from_document("Policy0", &document).unwrap();
        assert_eq!(
            evaluate(&statements, "sqs:SendMessage", "arn:aws:sqs:r:1:tasks"),
            Decision::Allowed("Policy0 statement 1".into())
        );
        assert_eq!(
            evaluate(&statements, "sqs:SendMessage", "arn:aws:sqs:r:1:dlq"),
            Decision::ExplicitlyDenied("Policy0 statement NoDlq".into())
        );
        assert_eq!(
            evaluate(&statements, "sqs:SendMessage", "arn:aws:sqs:r:1:events"),
            Decision::ImplicitlyDenied
        );
        assert!(evaluate(&statements, "s3:PutObject", "arn:aws:s3:::bucket/key").is_allowed());
        assert!(!evaluate(&statements, "sqs:SendMessage", "arn:aws:s3:::bucket/key").is_allowed());
    }

    /// iam:PassRole as the template grants it: the batch role, to Bedrock only. Without the
    /// context (or to another service, or another role) the call is refused.
    #[test]
    fn conditions_are_evaluated_in_the_request_context() {
        let document = json!({"Statement": [
            {"Effect": "Allow", "Action": "iam:PassRole", "Resource": "arn:aws:iam::1:role/batch",
             "Condition": {"StringEquals": {"iam:PassedToService": "bedrock.amazonaws.com"}}},
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*",
             "Condition": {"NumericLessThan": {"s3:max-keys": "10"}}},
            {"Effect": "Deny", "Action": "s3:PutObject", "Resource": "*",
             "Condition": {"ArnLike": {"aws:SourceArn": "arn:aws:bedrock:*:1:model-invocation-job/*"}}}
        ]});
        let statements = Statement::from_document("Policy0", &document).unwrap();
        let bedrock = [("iam:PassedToService", "bedrock.amazonaws.com")];
        assert!(evaluate_in(&statements, "iam:PassRole", "arn:aws:iam::1:role/batch", &bedrock).is_allowed());
        assert!(!evaluate(&statements, "iam:PassRole", "arn:aws:iam::1:role/batch").is_allowed());
        assert!(!evaluate_in(
            &statements,
            "iam:PassRole",
            "arn:aws:iam::1:role/batch",
            &[("iam:PassedToService", "lambda.amazonaws.com")]
        )
        .is_allowed());
        assert!(!evaluate_in(&statements, "iam:PassRole", "arn:aws:iam::1:role/admin", &bedrock).is_allowed());
        // An operator the rehearsal does not evaluate never allows.
        assert!(!evaluate_in(&statements, "s3:GetObject", "arn:aws:s3:::b/k", &[("s3:max-keys", "1")])
            .is_allowed());
        // A Deny's condition is evaluated when the context carries its key.
        let job = [("aws:SourceArn", "arn:aws:bedrock:r:1:model-invocation-job/j")];
        assert!(matches!(
            evaluate_in(&statements, "s3:PutObject", "arn:aws:s3:::b/k", &job),
            Decision::ExplicitlyDenied(_)
        ));
    }

    #[test]
    fn managed_policies_are_known_or_refused() {
        let sqs =
            managed_policy("arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole").unwrap();
        let statements = Statement::from_document("managed", &sqs).unwrap();
        assert!(evaluate(&statements, "sqs:ReceiveMessage", "arn:aws:sqs:r:1:any").is_allowed());
        assert!(!evaluate(&statements, "sqs:SendMessage", "arn:aws:sqs:r:1:any").is_allowed());
        assert!(managed_policy("arn:aws:iam::aws:policy/AdministratorAccess").is_none());
    }
}
