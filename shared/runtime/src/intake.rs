//! The intake queue (docs/api.md, "The intake queue"): a producer that may send to the queue
//! (a Step Functions state `arn:aws:states:::sqs:sendMessage.waitForTaskToken`, say) sends
//! `{"appId"?, "task": <create body>, "taskToken"?}`, and the task is created as `POST /v1/tasks`
//! creates it (idempotent on its effect key), with the token as its callback. The tenant comes
//! from the queue's configuration (`AITASK_INTAKE_TENANTS`), and the message's sender (its SQS
//! `SenderId`, which SQS sets from the credentials that sent it) must be listed for that tenant
//! (`AITASK_INTAKE_SENDERS`): being allowed to send to the queue is not enough.
//!
//! A message that cannot become a task (it does not parse, names a tenant the queue does not
//! take, comes from a sender not listed for its tenant, is refused as a create would be) fails
//! its token at once with the reason, so the waiting workflow sees it (every `UNAUTHORIZED` one
//! with the same cause, so a sender cannot probe which tenants a queue takes; the log has the
//! reason); one without a token to
//! tell is logged as an error and left to the queue's redrive policy (its dead-letter queue has
//! an alarm). Never silently.

use aitasks_contracts::{Callback, ErrorCode, Path, Problems};
use serde_json::{json, Map, Value};

use crate::api_error::ApiError;
use crate::app::App;
use crate::callbacks;
use crate::metrics::{Document, Unit};

/// What became of one intake message.
#[derive(Debug)]
pub enum Taken {
    /// Created (`new`), or found by its effect key (its token attached either way): acknowledged.
    Created { task_id: uuid::Uuid, new: bool },
    /// Refused for good, and the producer's callback failed with the reason: acknowledged.
    Refused { code: ErrorCode, reason: String },
    /// Refused for good with no callback to tell: reported failed, so the redrive policy moves it
    /// to the dead-letter queue.
    Undeliverable { code: ErrorCode, reason: String },
    /// Not handled now (the database is unavailable, the refusal could not be sent): reported
    /// failed, to be received again.
    Retry { reason: String },
}

impl Taken {
    fn outcome(&self) -> &'static str {
        match self {
            Taken::Created { new: true, .. } => "created",
            Taken::Created { .. } => "existing",
            Taken::Refused { .. } => "refused",
            Taken::Undeliverable { .. } => "undeliverable",
            Taken::Retry { .. } => "retry",
        }
    }

    /// Whether the record is reported failed (SQS delivers it again, then dead-letters it).
    pub fn report_failed(&self) -> bool {
        matches!(self, Taken::Undeliverable { .. } | Taken::Retry { .. })
    }
}

/// The one cause of every `UNAUTHORIZED` refusal, whatever its reason (a tenant the queue does
/// not take, a sender not listed for it, no tenant named on a queue of several): a sender learns
/// nothing of which tenants a queue takes. The reason goes to the log.
const UNAUTHORIZED_MESSAGE: &str =
    "the message's sender may not create tasks of its tenant through this queue \
     (AITASK_INTAKE_TENANTS, AITASK_INTAKE_SENDERS)";

/// A refusal: the code a failed callback's `error` carries, its cause, and what only the log
/// is told.
struct Refusal {
    code: ErrorCode,
    body: Value,
    detail: Option<String>,
}

impl Refusal {
    fn invalid(problems: Problems) -> Refusal {
        let body = json!({"code": ErrorCode::InvalidRequest.as_str(), "message": "the intake message is invalid",
                          "details": problems.listed()});
        Refusal { code: ErrorCode::InvalidRequest, body, detail: None }
    }

    fn unauthorized(reason: String) -> Refusal {
        let body = json!({"code": ErrorCode::Unauthorized.as_str(), "message": UNAUTHORIZED_MESSAGE});
        Refusal { code: ErrorCode::Unauthorized, body, detail: Some(reason) }
    }

    fn of(error: &ApiError) -> Refusal {
        let mut body = json!({"code": error.code().as_str(), "message": error.public_message()});
        if let ApiError::Invalid(problems) = error {
            body["details"] = json!(problems.listed());
        }
        Refusal { code: error.code(), body, detail: None }
    }

    /// What the log says: the cause, and the reason behind it when the cause keeps it back.
    fn reason(&self) -> String {
        match &self.detail {
            Some(detail) => format!("{} ({detail})", self.body),
            None => self.body.to_string(),
        }
    }
}

/// Take one intake message that arrived on `queue` (the queue's name) from `sender` (the
/// record's `SenderId` attribute).
pub async fn take<P>(app: &App<P>, queue: &str, sender: Option<&str>, body: &str) -> Taken {
    let taken = take_message(app, queue, sender, body).await;
    match &taken {
        Taken::Created { task_id, .. } => {
            tracing::info!(%task_id, queue, outcome = taken.outcome(), "intake message taken")
        }
        Taken::Refused { code, reason } => {
            tracing::warn!(queue, error_code = code.as_str(), reason = %reason, "intake message refused; its callback was failed with the reason")
        }
        Taken::Undeliverable { code, reason } => {
            tracing::error!(queue, error_code = code.as_str(), reason = %reason, "intake message refused, and it names no callback to tell: left to the queue's dead-letter queue")
        }
        Taken::Retry { reason } => {
            tracing::warn!(queue, reason = %reason, "intake message not taken now; it is received again")
        }
    }
    Document::new(&[&["Outcome"]])
        .dimension("Outcome", taken.outcome())
        .metric("IntakeMessages", Unit::Count, 1.0)
        .emit();
    taken
}

async fn take_message<P>(app: &App<P>, queue: &str, sender: Option<&str>, body: &str) -> Taken {
    let value: Value = match serde_json::from_str(body) {
        Ok(value) => value,
        Err(error) => {
            let refusal =
                Refusal::invalid(Problems::one(&Path::root(), format!("is not valid JSON: {error}")));
            return refuse(app, None, refusal).await;
        }
    };
    let message = match parse(&value) {
        Ok(message) => message,
        Err((callback, problems)) => return refuse(app, callback, Refusal::invalid(problems)).await,
    };
    let tenant =
        app.settings.intake_tenants.tenant(queue, message.app_id.as_deref()).map_err(|r| r.to_string());
    let tenant = tenant.and_then(|tenant| {
        app.settings.intake_senders.check(sender, &tenant).map(|()| tenant).map_err(|r| r.to_string())
    });
    let tenant = match tenant {
        Ok(tenant) => tenant,
        Err(reason) => return refuse(app, message.callback, Refusal::unauthorized(reason)).await,
    };
    match crate::create::create_task(app, &tenant, message.create.to_string().as_bytes()).await {
        Ok(created) => Taken::Created { task_id: created.task().id, new: created.is_new() },
        Err(error @ (ApiError::Unavailable(_) | ApiError::Internal(_))) => {
            Taken::Retry { reason: crate::error_chain(&error) }
        }
        Err(error) => refuse(app, message.callback, Refusal::of(&error)).await,
    }
}

/// A message's parts: the create body with its callback, and the tenant it names.
struct Message {
    app_id: Option<String>,
    create: Value,
    callback: Option<Callback>,
}

/// The envelope, strictly. On problems, the callback that can still be told (the token given,
/// or the task's own `callback`, if it is valid) comes back with them.
fn parse(value: &Value) -> Result<Message, (Option<Callback>, Problems)> {
    let root = Path::root();
    let mut problems = Problems::new();
    let token = value.get("taskToken").map(|token| {
        let mut found = Problems::new();
        let wrapped = json!({"stepFunctions": {"taskToken": token}});
        let callback = Callback::parse(&wrapped, &root.key("taskToken"), &mut found);
        if !found.is_empty() {
            // The path inside the wrapping is the caller's `taskToken`.
            problems.add(&root.key("taskToken"), "must be a Step Functions task token (1 to 2048 characters of A-Z, a-z, 0-9, +, /, =, -, _ and .)");
        }
        callback
    });
    let own = value.pointer("/task/callback").and_then(|callback| {
        Callback::parse(callback, &root.key("task").key("callback"), &mut Problems::new())
    });
    let callback = token.clone().flatten().or_else(|| own.clone());
    let Some(object) = value.as_object() else {
        problems.add(&root, "must be an object: {\"appId\"?, \"task\": <create body>, \"taskToken\"?}");
        return Err((callback, problems));
    };
    for key in object.keys() {
        if !["appId", "task", "taskToken"].contains(&key.as_str()) {
            problems.add(&root.key(key), "is not a known field");
        }
    }
    let app_id = match object.get("appId") {
        None | Some(Value::Null) => None,
        Some(Value::String(app_id)) => Some(app_id.clone()),
        Some(_) => {
            problems.add(&root.key("appId"), "must be a string");
            None
        }
    };
    let mut create: Map<String, Value> = match object.get("task") {
        Some(Value::Object(task)) => task.clone(),
        Some(_) => {
            problems.add(&root.key("task"), "must be an object (a POST /v1/tasks body)");
            Map::new()
        }
        None => {
            problems.add(&root.key("task"), "is required");
            Map::new()
        }
    };
    if let Some(Some(token)) = &token {
        if own.is_some() || create.contains_key("callback") {
            problems.add(&root.key("taskToken"), "give one callback: taskToken, or task.callback, not both");
        } else {
            create.insert("callback".to_owned(), json!({"stepFunctions": {"taskToken": token.token()}}));
        }
    }
    if !problems.is_empty() {
        return Err((callback, problems));
    }
    Ok(Message { app_id, create: Value::Object(create), callback })
}

/// Refuse the message: fail its callback with the reason, or, with none to tell, leave it to the
/// dead-letter queue.
async fn refuse<P>(app: &App<P>, callback: Option<Callback>, refusal: Refusal) -> Taken {
    let reason = refusal.reason();
    let (Some(callback), Some(callers)) = (callback, &app.callbacks) else {
        return Taken::Undeliverable { code: refusal.code, reason };
    };
    let cause = refusal.body.to_string();
    match callbacks::fail_now(callers, &callback, refusal.code.as_str(), &cause).await {
        Ok(()) => Taken::Refused { code: refusal.code, reason },
        Err(failed) => Taken::Retry { reason: format!("the refusal could not be sent ({failed}): {reason}") },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_is_strict_and_keeps_the_token_it_can_still_fail() {
        let task = json!({"runId": "00000000-0000-0000-0000-000000000000", "stepKey": "s", "effectKey": "e",
                          "modelId": "default", "request": {}});
        let message = parse(&json!({"task": task, "taskToken": "tok-1"})).unwrap();
        assert_eq!(message.create["callback"], json!({"stepFunctions": {"taskToken": "tok-1"}}));
        assert_eq!(message.callback.unwrap().token(), "tok-1");
        assert_eq!(parse(&json!({"task": task, "appId": "acme"})).unwrap().app_id.as_deref(), Some("acme"));

        let (callback, problems) =
            parse(&json!({"task": 7, "taskToken": "tok-2", "extra": 1})).err().unwrap();
        assert_eq!(callback.unwrap().token(), "tok-2", "a bad message still fails its token");
        assert_eq!(problems.paths(), ["extra", "task"]);
        let (callback, problems) = parse(&json!({"task": task, "taskToken": "not a token"})).err().unwrap();
        assert!(callback.is_none());
        assert_eq!(problems.paths(), ["taskToken"]);
        let two = json!({"task": {"callback": {"lambdaDurable": {"callbackId": "Y2I="}}}, "taskToken": "t"});
        let (_, problems) = parse(&two).err().unwrap();
        assert_eq!(problems.paths(), ["taskToken"]);
        let (callback, _) = parse(&json!([1])).err().unwrap();
        assert!(callback.is_none());
    }
}
