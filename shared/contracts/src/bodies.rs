//! The HTTP API's request bodies (docs/api.md): parsed strictly, every problem reported.

use crate::limits::{
    EFFECT_KEY_MAX_CHARS, ID_MAX_CHARS, MAX_SAFE_INTEGER, MODEL_ID_MAX_CHARS, STEP_KEY_MAX_CHARS,
};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use crate::callback::Callback;
use crate::delivery::DeliveryMode;
use crate::fields::Fields;
use crate::ids::EffectKey;
use crate::problems::{Path, Problems};
use crate::request::AiRequest;

/// Parse bytes as JSON; malformed JSON (bad UTF-8, numbers beyond a double, nesting past the
/// parser's limit) is one problem at the root.
pub fn parse_json(bytes: &[u8]) -> Result<Value, Problems> {
    serde_json::from_slice(bytes).map_err(|e| Problems::one(&Path::root(), format!("is not valid JSON: {e}")))
}

/// Who owns a new task: a run, or the application itself.
#[derive(Debug, Clone, PartialEq)]
pub enum Owner {
    Run(Uuid),
    Application { scope_id: String, usage_subject: Option<UsageSubject> },
}

/// Whom an application-owned task's usage is attributed to. Comes from the authenticated
/// application's create call, never from the request's input or the model's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UsageSubject {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
}

/// Admission limits of a scoped create (docs/scoped-inference.md). Each is a positive safe integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    pub burst: i64,
    pub tasks_per_minute: i64,
    pub max_steps_per_source: i64,
    pub sources_per24_hours: i64,
    pub scope_concurrent: i64,
    pub global_concurrent: i64,
}

/// The `scope` block: scoped inference for a source.
#[derive(Debug, Clone, PartialEq)]
pub struct Scope {
    pub source_id: String,
    pub source_revision: String,
    pub recompute: bool,
    pub budget: Budget,
}

impl Scope {
    /// The terms a scoped create stores on its task (migrations/V33), in the create body's form
    /// less `recompute`: a replay of the task is admitted on them.
    pub fn terms(&self) -> Value {
        serde_json::json!({
            "sourceId": self.source_id,
            "sourceRevision": self.source_revision,
            "budget": self.budget,
        })
    }
}

/// `POST /v1/tasks`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTask {
    pub owner: Owner,
    pub step_key: String,
    pub effect_key: EffectKey,
    pub model_id: String,
    pub request: AiRequest,
    pub scope: Option<Scope>,
    /// Whom to answer when the task ends (docs/api.md, "Callbacks").
    pub callback: Option<Callback>,
    /// Now, or deferred to a provider's batch within a window (docs/api.md, "Deferred tasks").
    pub delivery: DeliveryMode,
}

impl CreateTask {
    pub fn parse(body: &Value) -> Result<CreateTask, Problems> {
        let root = Path::root();
        let mut problems = Problems::new();
        let fields = Fields::object(
            body,
            &root,
            &[
                "runId",
                "owner",
                "stepKey",
                "effectKey",
                "modelId",
                "request",
                "scope",
                "callback",
                "delivery",
            ],
            &mut problems,
        )
        .ok_or_else(|| problems.clone())?;

        let owner = match (fields.value("runId"), fields.value("owner")) {
            (Some(_), Some(_)) => {
                problems.add(&root, "must have exactly one of runId and owner, not both");
                None
            }
            (None, None) => {
                problems.add(&root, "must have exactly one of runId and owner");
                None
            }
            (Some(run_id), None) => parse_uuid(run_id, &fields.path("runId"), &mut problems).map(Owner::Run),
            (None, Some(owner)) => parse_owner(owner, &fields.path("owner"), &mut problems),
        };
        let step_key = fields.string("stepKey", 1, STEP_KEY_MAX_CHARS, &mut problems);
        let effect_key = fields
            .string("effectKey", 1, EFFECT_KEY_MAX_CHARS, &mut problems)
            .and_then(|key| EffectKey::parse(&key));
        let model_id = fields.string("modelId", 1, MODEL_ID_MAX_CHARS, &mut problems);
        let request = fields.required("request", &mut problems).and_then(|value| {
            AiRequest::parse(value, &fields.path("request")).map_err(|found| problems.absorb(found)).ok()
        });
        let scope = match fields.value("scope") {
            None => Some(None),
            Some(value) => parse_scope(value, &fields.path("scope"), &mut problems).map(Some),
        };
        let callback = match fields.value("callback") {
            None => Some(None),
            Some(value) => Callback::parse(value, &fields.path("callback"), &mut problems).map(Some),
        };
        let delivery = match fields.value("delivery") {
            None => Some(DeliveryMode::Now),
            Some(value) => DeliveryMode::parse(value, &fields.path("delivery"), &mut problems),
        };
        match (owner, step_key, effect_key, model_id, request, scope, callback, delivery) {
            (
                Some(owner),
                Some(step_key),
                Some(effect_key),
                Some(model_id),
                Some(request),
                Some(scope),
                Some(callback),
                Some(delivery),
            ) if problems.is_empty() => {
                Ok(CreateTask { owner, step_key, effect_key, model_id, request, scope, callback, delivery })
            }
            _ => Err(problems),
        }
    }
}

fn parse_uuid(value: &Value, path: &Path, problems: &mut Problems) -> Option<Uuid> {
    match value.as_str().map(Uuid::parse_str) {
        Some(Ok(id)) => Some(id),
        _ => {
            problems.add(path, "must be a UUID");
            None
        }
    }
}

fn parse_owner(value: &Value, path: &Path, problems: &mut Problems) -> Option<Owner> {
    let fields = Fields::object(value, path, &["scopeId", "usageSubject"], problems)?;
    let scope_id = fields.string("scopeId", 1, ID_MAX_CHARS, problems);
    let usage_subject = match fields.value("usageSubject") {
        None => Some(None),
        Some(subject) => {
            let path = fields.path("usageSubject");
            Fields::object(subject, &path, &["type", "id"], problems).and_then(|subject| {
                let kind = subject.string("type", 1, 100, problems);
                let id = subject.string("id", 1, ID_MAX_CHARS, problems);
                Some(Some(UsageSubject { kind: kind?, id: id? }))
            })
        }
    };
    Some(Owner::Application { scope_id: scope_id?, usage_subject: usage_subject? })
}

fn parse_scope(value: &Value, path: &Path, problems: &mut Problems) -> Option<Scope> {
    let fields =
        Fields::object(value, path, &["sourceId", "sourceRevision", "recompute", "budget"], problems)?;
    let source_id = fields.string("sourceId", 1, ID_MAX_CHARS, problems);
    let source_revision = fields.string("sourceRevision", 1, ID_MAX_CHARS, problems);
    let recompute = match fields.value("recompute") {
        None => Some(false),
        Some(_) => fields.opt_boolean("recompute", problems),
    };
    let budget = fields.required("budget", problems).and_then(|value| {
        let path = fields.path("budget");
        let b = Fields::object(
            value,
            &path,
            &[
                "burst",
                "tasksPerMinute",
                "maxStepsPerSource",
                "sourcesPer24Hours",
                "scopeConcurrent",
                "globalConcurrent",
            ],
            problems,
        )?;
        let mut positive = |key: &str| b.integer(key, 1, MAX_SAFE_INTEGER, problems);
        let burst = positive("burst");
        let tasks_per_minute = positive("tasksPerMinute");
        let max_steps_per_source = positive("maxStepsPerSource");
        let sources_per24_hours = positive("sourcesPer24Hours");
        let scope_concurrent = positive("scopeConcurrent");
        let global_concurrent = positive("globalConcurrent");
        Some(Budget {
            burst: burst?,
            tasks_per_minute: tasks_per_minute?,
            max_steps_per_source: max_steps_per_source?,
            sources_per24_hours: sources_per24_hours?,
            scope_concurrent: scope_concurrent?,
            global_concurrent: global_concurrent?,
        })
    });
    Some(Scope {
        source_id: source_id?,
        source_revision: source_revision?,
        recompute: recompute?,
        budget: budget?,
    })
}

/// `POST /v1/runs`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateRun {
    pub scope_id: String,
    pub actor_user_id: Option<String>,
}

impl CreateRun {
    pub fn parse(body: &Value) -> Result<CreateRun, Problems> {
        let mut problems = Problems::new();
        let fields = Fields::object(body, &Path::root(), &["scopeId", "actor"], &mut problems)
            .ok_or_else(|| problems.clone())?;
        let scope_id = fields.string("scopeId", 1, ID_MAX_CHARS, &mut problems);
        let actor = match fields.value("actor") {
            None => Some(None),
            Some(actor) => Fields::object(actor, &fields.path("actor"), &["userId"], &mut problems)
                .and_then(|actor| actor.string("userId", 1, ID_MAX_CHARS, &mut problems))
                .map(Some),
        };
        match (scope_id, actor) {
            (Some(scope_id), Some(actor_user_id)) if problems.is_empty() => {
                Ok(CreateRun { scope_id, actor_user_id })
            }
            _ => Err(problems),
        }
    }
}

/// `POST /v1/tasks/release`.
#[derive(Debug, Clone, PartialEq)]
pub struct Release {
    pub scope_id: String,
    pub effect_key: EffectKey,
}

impl Release {
    pub fn parse(body: &Value) -> Result<Release, Problems> {
        let mut problems = Problems::new();
        let fields = Fields::object(body, &Path::root(), &["scopeId", "effectKey"], &mut problems)
            .ok_or_else(|| problems.clone())?;
        let scope_id = fields.string("scopeId", 1, ID_MAX_CHARS, &mut problems);
        let effect_key = fields
            .string("effectKey", 1, EFFECT_KEY_MAX_CHARS, &mut problems)
            .and_then(|key| EffectKey::parse(&key));
        match (scope_id, effect_key) {
            (Some(scope_id), Some(effect_key)) if problems.is_empty() => Ok(Release { scope_id, effect_key }),
            _ => Err(problems),
        }
    }
}
