//! The AWS calls that answer and heartbeat callbacks, and what each came to. Step Functions:
//! `SendTaskSuccess`, `SendTaskFailure`, `SendTaskHeartbeat`; Lambda durable functions:
//! `SendDurableExecutionCallbackSuccess`, `...Failure`, `...Heartbeat` (aws-sdk-lambda). The
//! SDKs' own retries stay on (throttling, 5xx and timeouts are retried with backoff inside a
//! call); what still fails is retried by the outbox later. A caller that no longer waits
//! (`TaskTimedOut`, `TaskDoesNotExist`, `InvalidToken`, `CallbackTimeoutException`, a durable
//! execution not found) is gone. The token is never in a message this module returns.

use aws_sdk_lambda::primitives::Blob;
use aws_sdk_lambda::types::ErrorObject;
// One smithy runtime under every SDK: Step Functions' re-exports name Lambda's errors too.
use aws_sdk_sfn::error::{ProvideErrorMetadata, SdkError};

use super::answer::Answer;

/// Which call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Call {
    Success,
    Failure,
    Heartbeat,
}

impl Call {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Call::Success => "success",
            Call::Failure => "failure",
            Call::Heartbeat => "heartbeat",
        }
    }
}

/// What a call came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    Accepted,
    /// The caller no longer waits: AWS's code and message.
    Gone(String),
    /// Worth trying again later (unavailable, timed out, not allowed yet).
    Retry(String),
    /// AWS throttled it: the account's bucket for this call is empty for now.
    Throttled(String),
    /// AWS will never accept this call.
    Refused(String),
}

impl Outcome {
    pub(crate) fn as_str(&self) -> &'static str {
        match self {
            Outcome::Accepted => "accepted",
            Outcome::Gone(_) => "gone",
            Outcome::Retry(_) => "retry",
            Outcome::Throttled(_) => "throttled",
            Outcome::Refused(_) => "refused",
        }
    }
}

/// The two services' clients.
#[derive(Debug, Clone)]
pub(crate) struct Clients {
    pub(crate) sfn: aws_sdk_sfn::Client,
    pub(crate) lambda: aws_sdk_lambda::Client,
}

/// Send `answer` to a callback of `kind` holding `token`.
pub(crate) async fn answer(clients: &Clients, kind: &str, token: &str, answer: &Answer) -> (Call, Outcome) {
    let call = match answer {
        Answer::Success(_) => Call::Success,
        Answer::Failure { .. } => Call::Failure,
    };
    let outcome = match (kind, answer) {
        (aitasks_contracts::STEP_FUNCTIONS, Answer::Success(output)) => {
            outcome(clients.sfn.send_task_success().task_token(token).output(output).send().await, token)
        }
        (aitasks_contracts::STEP_FUNCTIONS, Answer::Failure { error, cause, .. }) => outcome(
            clients.sfn.send_task_failure().task_token(token).error(error).cause(cause).send().await,
            token,
        ),
        (aitasks_contracts::LAMBDA_DURABLE, Answer::Success(result)) => outcome(
            clients
                .lambda
                .send_durable_execution_callback_success()
                .callback_id(token)
                .result(Blob::new(result.as_bytes()))
                .send()
                .await,
            token,
        ),
        (aitasks_contracts::LAMBDA_DURABLE, Answer::Failure { error, cause, data }) => {
            let object =
                ErrorObject::builder().error_type(error).error_message(cause).error_data(data).build();
            outcome(
                clients
                    .lambda
                    .send_durable_execution_callback_failure()
                    .callback_id(token)
                    .error(object)
                    .send()
                    .await,
                token,
            )
        }
        (other, _) => Outcome::Refused(format!("unknown callback kind {other:?}")),
    };
    (call, outcome)
}

/// Tell a callback's caller that its task still lives.
pub(crate) async fn heartbeat(clients: &Clients, kind: &str, token: &str) -> Outcome {
    match kind {
        aitasks_contracts::STEP_FUNCTIONS => {
            outcome(clients.sfn.send_task_heartbeat().task_token(token).send().await, token)
        }
        aitasks_contracts::LAMBDA_DURABLE => outcome(
            clients.lambda.send_durable_execution_callback_heartbeat().callback_id(token).send().await,
            token,
        ),
        other => Outcome::Refused(format!("unknown callback kind {other:?}")),
    }
}

fn outcome<T, E, R>(result: Result<T, SdkError<E, R>>, token: &str) -> Outcome
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug + 'static,
{
    let error = match result {
        Ok(_) => return Outcome::Accepted,
        Err(error) => error,
    };
    let scrub = |text: String| if token.is_empty() { text } else { text.replace(token, "<token>") };
    match &error {
        SdkError::ServiceError(service) => {
            let code = service.err().code().unwrap_or("unknown");
            let message = scrub(format!("{code}: {}", service.err().message().unwrap_or_default()));
            classify(code, message)
        }
        // The request could not even be built: it never will be.
        SdkError::ConstructionFailure(_) => Outcome::Refused(scrub(crate::error_chain(&error))),
        // Timeouts, connection failures, answers that could not be read.
        _ => Outcome::Retry(scrub(crate::error_chain(&error))),
    }
}

/// A service error by its code.
fn classify(code: &str, message: String) -> Outcome {
    match code {
        "TaskTimedOut"
        | "TaskDoesNotExist"
        | "InvalidToken"
        | "CallbackTimeoutException"
        | "ResourceNotFoundException" => Outcome::Gone(message),
        // Step Functions' and Lambda's names for an empty bucket.
        "ThrottlingException" | "TooManyRequestsException" => Outcome::Throttled(message),
        "InvalidOutput"
        | "InvalidParameterValueException"
        | "ValidationException"
        | "SerializationException" => Outcome::Refused(message),
        // 5xx (the SDK retried them already, but for heartbeats), and anything unknown: a
        // missing grant, say, which a deploy may fix.
        _ => Outcome::Retry(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_gone_is_told_from_a_call_to_retry_or_refuse() {
        for gone in ["TaskTimedOut", "TaskDoesNotExist", "InvalidToken", "CallbackTimeoutException"] {
            assert!(matches!(classify(gone, gone.into()), Outcome::Gone(_)), "{gone}");
        }
        for retry in ["ServiceException", "AccessDeniedException"] {
            assert!(matches!(classify(retry, retry.into()), Outcome::Retry(_)), "{retry}");
        }
        for throttled in ["ThrottlingException", "TooManyRequestsException"] {
            assert!(matches!(classify(throttled, throttled.into()), Outcome::Throttled(_)), "{throttled}");
        }
        assert!(matches!(classify("InvalidOutput", String::new()), Outcome::Refused(_)));
    }
}
