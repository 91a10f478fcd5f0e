//! The `callback` of a create body (docs/api.md, "Callbacks"): whom to answer when the task ends,
//! instead of being polled. A token is a capability (whoever holds it completes the caller's
//! step): it is checked for length and characters here and never echoed, in a problem or
//! anywhere else.

use std::fmt;

use serde_json::Value;

use crate::fields::Fields;
use crate::limits::{DURABLE_CALLBACK_ID_MAX_CHARS, STEP_FUNCTIONS_TOKEN_MAX_CHARS};
use crate::problems::{Path, Problems};

/// Who waits for a task, and the token that answers them.
#[derive(Clone, PartialEq, Eq)]
pub enum Callback {
    /// A Step Functions task token (`.waitForTaskToken`): `SendTaskSuccess` / `SendTaskFailure`.
    StepFunctions { task_token: String },
    /// A Lambda durable function's callback id: `SendDurableExecutionCallbackSuccess` / `Failure`.
    LambdaDurable { callback_id: String },
}

/// The kinds, as the store records them.
pub const STEP_FUNCTIONS: &str = "step_functions";
pub const LAMBDA_DURABLE: &str = "lambda_durable";

impl Callback {
    /// The kind as the store records it.
    pub fn kind(&self) -> &'static str {
        match self {
            Callback::StepFunctions { .. } => STEP_FUNCTIONS,
            Callback::LambdaDurable { .. } => LAMBDA_DURABLE,
        }
    }

    /// The token itself: for the store and for AWS, nothing else.
    pub fn token(&self) -> &str {
        match self {
            Callback::StepFunctions { task_token } => task_token,
            Callback::LambdaDurable { callback_id } => callback_id,
        }
    }

    /// `{"stepFunctions": {"taskToken": "…"}}` or `{"lambdaDurable": {"callbackId": "…"}}`.
    pub fn parse(value: &Value, path: &Path, problems: &mut Problems) -> Option<Callback> {
        let fields = Fields::object(value, path, &["stepFunctions", "lambdaDurable"], problems)?;
        match (fields.value("stepFunctions"), fields.value("lambdaDurable")) {
            (Some(inner), None) => {
                let path = fields.path("stepFunctions");
                let inner = Fields::object(inner, &path, &["taskToken"], problems)?;
                let token = token(
                    &inner,
                    "taskToken",
                    STEP_FUNCTIONS_TOKEN_MAX_CHARS,
                    step_functions_char,
                    problems,
                )?;
                Some(Callback::StepFunctions { task_token: token })
            }
            (None, Some(inner)) => {
                let path = fields.path("lambdaDurable");
                let inner = Fields::object(inner, &path, &["callbackId"], problems)?;
                let id = token(&inner, "callbackId", DURABLE_CALLBACK_ID_MAX_CHARS, base64_char, problems)?;
                if !durable_padding_ok(&id) {
                    problems.add(&inner.path("callbackId"), DURABLE_RULE);
                    return None;
                }
                Some(Callback::LambdaDurable { callback_id: id })
            }
            (Some(_), Some(_)) => {
                problems.add(path, "must have exactly one of stepFunctions and lambdaDurable, not both");
                None
            }
            (None, None) => {
                problems.add(path, "must have exactly one of stepFunctions and lambdaDurable");
                None
            }
        }
    }
}

/// Never the token: a debug print of a create must not leak the capability.
impl fmt::Debug for Callback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Callback({}, {} characters)", self.kind(), self.token().chars().count())
    }
}

const STEP_FUNCTIONS_RULE: &str =
    "must be a Step Functions task token: 1 to 2048 characters of A-Z, a-z, 0-9, +, /, =, -, _ and .";
const DURABLE_RULE: &str =
    "must be a durable-function callback id: 1 to 1024 characters of A-Z, a-z, 0-9, + and /, then up to two =";

/// Task tokens are base64 in AWS; emulators hand out UUID-like ones.
fn step_functions_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '-' | '_' | '.')
}

fn base64_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=')
}

/// `[A-Za-z0-9+/]+={0,2}`: the padding only at the end, at most two.
fn durable_padding_ok(id: &str) -> bool {
    let body = id.trim_end_matches('=');
    !body.is_empty() && id.len() - body.len() <= 2 && !body.contains('=')
}

/// A token field: a string of `1..=max` characters that `allowed` accepts. The problem says
/// what a token must be, never what this one was.
fn token(
    fields: &Fields<'_>,
    key: &str,
    max: usize,
    allowed: fn(char) -> bool,
    problems: &mut Problems,
) -> Option<String> {
    let value = fields.required(key, problems)?;
    let rule = if max == STEP_FUNCTIONS_TOKEN_MAX_CHARS { STEP_FUNCTIONS_RULE } else { DURABLE_RULE };
    match value.as_str() {
        Some(text) if !text.is_empty() && text.chars().count() <= max && text.chars().all(allowed) => {
            Some(text.to_owned())
        }
        _ => {
            problems.add(&fields.path(key), rule);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(value: Value) -> Result<Callback, Problems> {
        let mut problems = Problems::new();
        match Callback::parse(&value, &Path::root().key("callback"), &mut problems) {
            Some(callback) if problems.is_empty() => Ok(callback),
            _ => Err(problems),
        }
    }

    #[test]
    fn each_kind_parses_with_its_token() {
        let token = "AQCEAAAAKgAAAAMAAAAAAAAAAX+/0123456789abcdefABCDEF==";
        assert_eq!(
            parse(json!({"stepFunctions": {"taskToken": token}})).unwrap(),
            Callback::StepFunctions { task_token: token.into() }
        );
        let uuid_like = "5f3e0a9c-8d2b-4c1e-9f7a-3b6d2e1c0a9f";
        assert!(parse(json!({"stepFunctions": {"taskToken": uuid_like}})).is_ok());
        let id = "ZXhlY3V0aW9uLWlkOmNhbGxiYWNrLTE=";
        let callback = parse(json!({"lambdaDurable": {"callbackId": id}})).unwrap();
        assert_eq!(callback.kind(), LAMBDA_DURABLE);
        assert_eq!(callback.token(), id);
    }

    #[test]
    fn bad_tokens_are_refused_without_being_echoed() {
        let secret = "s3cr3t token with spaces";
        let long = "A".repeat(STEP_FUNCTIONS_TOKEN_MAX_CHARS + 1);
        for (body, path) in [
            (json!({"stepFunctions": {"taskToken": secret}}), "callback.stepFunctions.taskToken"),
            (json!({"stepFunctions": {"taskToken": ""}}), "callback.stepFunctions.taskToken"),
            (json!({"stepFunctions": {"taskToken": long}}), "callback.stepFunctions.taskToken"),
            (json!({"stepFunctions": {"taskToken": 7}}), "callback.stepFunctions.taskToken"),
            (json!({"stepFunctions": {}}), "callback.stepFunctions.taskToken"),
            (json!({"lambdaDurable": {"callbackId": "abc-def"}}), "callback.lambdaDurable.callbackId"),
            (json!({"lambdaDurable": {"callbackId": "ab=c"}}), "callback.lambdaDurable.callbackId"),
            (json!({"lambdaDurable": {"callbackId": "abc==="}}), "callback.lambdaDurable.callbackId"),
            (json!({"lambdaDurable": {"callbackId": "=="}}), "callback.lambdaDurable.callbackId"),
            (json!({"lambdaDurable": {"callbackId": "A".repeat(1025)}}), "callback.lambdaDurable.callbackId"),
            (json!({"stepFunctions": {"taskToken": "a"}, "lambdaDurable": {"callbackId": "a"}}), "callback"),
            (json!({}), "callback"),
            (json!({"webhook": {}}), "callback.webhook"),
            (json!("token"), "callback"),
        ] {
            let problems = parse(body.clone()).unwrap_err();
            assert!(problems.paths().contains(&path), "{body}: {:?}", problems.paths());
            for problem in problems.iter() {
                assert!(!problem.message.contains(secret), "the token is not echoed: {}", problem.message);
            }
        }
        assert_eq!(
            parse(json!({"lambdaDurable": {"callbackId": "A".repeat(1022) + "=="}})).unwrap().kind(),
            LAMBDA_DURABLE
        );
    }

    #[test]
    fn a_debug_print_hides_the_token() {
        let callback = Callback::StepFunctions { task_token: "AAAAsecret".into() };
        let printed = format!("{callback:?}");
        assert!(!printed.contains("secret"), "{printed}");
        assert!(printed.contains("step_functions"));
    }
}
