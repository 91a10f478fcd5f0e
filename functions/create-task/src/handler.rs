//! `create-task`, behind API Gateway: runs and tasks. Parses the event, calls the runtime,
//! maps the result; nothing else.

use aitasks_contracts::{ActivityQuery, HoldsQuery, ListQuery, OperationsQuery, RunsQuery, SummaryQuery};
use aitasks_lambda_kit::{
    check_method, json_response, many_response, serve_http, ApiError, HttpRequest, Route,
};
use aitasks_runtime::answers::{RunAnswer, TaskAnswer, TaskListAnswer};
use aitasks_runtime::{api, history, holds, live_output, operations, replays, App};
use aitasks_store::{Run, Task};
use aws_lambda_events::apigw::{ApiGatewayV2httpRequest, ApiGatewayV2httpResponse};
use lambda_runtime::{Error, LambdaEvent};

/// The paths this function serves (template.yaml routes each, and `ANY` on each for the 405).
const ROUTES: &[Route] = &[
    Route { path: &["v1", "runs"], allow: &["GET", "POST"] },
    Route { path: &["v1", "runs", "{}"], allow: &["GET"] },
    Route { path: &["v1", "runs", "{}", "cancel"], allow: &["POST"] },
    Route { path: &["v1", "runs", "{}", "progress"], allow: &["GET"] },
    Route { path: &["v1", "tasks"], allow: &["GET", "POST"] },
    Route { path: &["v1", "tasks", "batch"], allow: &["POST"] },
    Route { path: &["v1", "tasks", "{}"], allow: &["GET"] },
    Route { path: &["v1", "tasks", "{}", "cancel"], allow: &["POST"] },
    Route { path: &["v1", "tasks", "{}", "attempts"], allow: &["GET"] },
    Route { path: &["v1", "tasks", "{}", "events"], allow: &["GET"] },
    Route { path: &["v1", "tasks", "{}", "callbacks"], allow: &["GET"] },
    Route { path: &["v1", "tasks", "{}", "batch"], allow: &["GET"] },
    Route { path: &["v1", "summary"], allow: &["GET"] },
    Route { path: &["v1", "activity"], allow: &["GET"] },
    // Holds (docs/api.md, "Holds").
    Route { path: &["v1", "holds"], allow: &["GET", "POST"] },
    Route { path: &["v1", "holds", "{}"], allow: &["GET"] },
    Route { path: &["v1", "holds", "{}", "release"], allow: &["POST"] },
    // Replays and operations (docs/api.md, "Replaying a task" and "Operations").
    Route { path: &["v1", "tasks", "{}", "replay"], allow: &["POST"] },
    Route { path: &["v1", "tasks", "{}", "replays"], allow: &["GET"] },
    // Live output (docs/api.md, "Live output").
    Route { path: &["v1", "tasks", "{}", "output"], allow: &["GET"] },
    Route { path: &["v1", "operations"], allow: &["GET", "POST"] },
    Route { path: &["v1", "operations", "{}"], allow: &["GET"] },
    Route { path: &["v1", "operations", "{}", "stop"], allow: &["POST"] },
];

/// The parameters that page or narrow a listing (`runId` or `scopeId`), which `effectKey` takes
/// none of.
const LISTING_PARAMETERS: [&str; 7] =
    ["status", "kind", "modelId", "createdAfter", "createdBefore", "after", "limit"];

/// Handle one API Gateway HTTP API request.
pub async fn handle<P>(
    app: &App<P>,
    event: LambdaEvent<ApiGatewayV2httpRequest>,
) -> Result<ApiGatewayV2httpResponse, Error> {
    Ok(serve_http(&event.payload, |request| async move { route(app, &request).await }).await)
}

async fn route<P>(app: &App<P>, request: &HttpRequest<'_>) -> Result<ApiGatewayV2httpResponse, ApiError> {
    let tenant = request.tenant(&app.settings.app_token_field)?;
    let segments = request.segments();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let method = request.method().as_str();
    check_method(ROUTES, method, &segments)?;
    match (method, segments.as_slice()) {
        ("POST", ["v1", "runs"]) => {
            let key = request.header("idempotency-key");
            let created = api::create_run(app, &tenant, &request.body()?, key).await?;
            Ok(run_answer(if created.is_new() { 201 } else { 200 }, created.run()))
        }
        ("GET", ["v1", "runs"]) => {
            let query = RunsQuery {
                status: request.query("status"),
                scope_id: request.query("scopeId"),
                created_after: request.query("createdAfter"),
                created_before: request.query("createdBefore"),
                after: request.query("after"),
                limit: request.query("limit"),
            };
            Ok(json_response(200, &history::list_runs(app, &tenant, query).await?))
        }
        ("GET", ["v1", "activity"]) => {
            let query = ActivityQuery {
                bucket: request.query("bucket"),
                from: request.query("from"),
                to: request.query("to"),
            };
            Ok(json_response(200, &history::activity(app, &tenant, query).await?))
        }
        ("GET", ["v1", "summary"]) => {
            let query = SummaryQuery {
                created_after: request.query("createdAfter"),
                created_before: request.query("createdBefore"),
            };
            Ok(json_response(200, &history::summary(app, &tenant, query).await?))
        }
        ("GET", ["v1", "tasks", task_id, "attempts"]) => {
            Ok(json_response(200, &history::task_attempts(app, &tenant, task_id).await?))
        }
        ("GET", ["v1", "tasks", task_id, "events"]) => {
            Ok(json_response(200, &history::task_events(app, &tenant, task_id).await?))
        }
        ("GET", ["v1", "tasks", task_id, "callbacks"]) => {
            Ok(json_response(200, &history::task_callbacks(app, &tenant, task_id).await?))
        }
        ("GET", ["v1", "tasks", task_id, "batch"]) => {
            Ok(json_response(200, &history::task_batch(app, &tenant, task_id).await?))
        }
        // Replays and operations.
        ("POST", ["v1", "tasks", task_id, "replay"]) => {
            let created = replays::replay_task(app, &tenant, task_id, &request.body()?).await?;
            Ok(task_answer(if created.is_new() { 201 } else { 200 }, created.task()))
        }
        ("GET", ["v1", "tasks", task_id, "replays"]) => {
            Ok(json_response(200, &replays::task_replays(app, &tenant, task_id).await?))
        }
        ("GET", ["v1", "tasks", task_id, "output"]) => {
            let query = live_output::OutputQuery {
                segment: request.query("segment"),
                after: request.query("after"),
                wait: request.query("wait"),
            };
            Ok(json_response(200, &live_output::read_output(app, &tenant, task_id, query).await?))
        }
        ("POST", ["v1", "operations"]) => {
            let key = request.header("idempotency-key");
            match operations::create_operation(app, &tenant, &request.body()?, key).await? {
                operations::CreatedOp::New(operation) => Ok(json_response(202, &operation)),
                operations::CreatedOp::Existing(operation) => Ok(json_response(200, &operation)),
            }
        }
        ("GET", ["v1", "operations"]) => {
            let query = OperationsQuery {
                state: request.query("state"),
                after: request.query("after"),
                limit: request.query("limit"),
            };
            Ok(json_response(200, &operations::list_operations(app, &tenant, query).await?))
        }
        ("GET", ["v1", "operations", id]) => {
            Ok(json_response(200, &operations::get_operation(app, &tenant, id).await?))
        }
        ("POST", ["v1", "operations", id, "stop"]) => {
            Ok(json_response(200, &operations::stop_operation(app, &tenant, id).await?))
        }
        ("GET", ["v1", "runs", run_id]) => Ok(run_answer(200, &api::get_run(app, &tenant, run_id).await?)),
        ("GET", ["v1", "runs", run_id, "progress"]) => {
            Ok(json_response(200, &api::run_progress(app, &tenant, run_id).await?))
        }
        ("POST", ["v1", "runs", run_id, "cancel"]) => {
            Ok(run_answer(200, &api::cancel_run(app, &tenant, run_id).await?))
        }
        ("POST", ["v1", "tasks"]) => {
            let created = api::create_task(app, &tenant, &request.body()?).await?;
            Ok(task_answer(if created.is_new() { 201 } else { 200 }, created.task()))
        }
        ("POST", ["v1", "tasks", "batch"]) => {
            Ok(many_response(&api::create_many(app, &tenant, &request.body()?).await?))
        }
        ("GET", ["v1", "tasks"]) => match request.query("effectKey") {
            Some(_) if ["runId", "scopeId"].iter().any(|name| request.query(name).is_some()) => {
                Err(ApiError::invalid("effectKey", "is not taken together with runId or scopeId"))
            }
            Some(_)
                if let Some(name) = LISTING_PARAMETERS.into_iter().find(|n| request.query(n).is_some()) =>
            {
                Err(ApiError::invalid(name, "pages a listing: it needs runId or scopeId, not effectKey"))
            }
            Some(effect_key) => {
                Ok(task_answer(200, &api::get_task_by_effect_key(app, &tenant, Some(effect_key)).await?))
            }
            None => {
                let query = ListQuery {
                    run_id: request.query("runId"),
                    scope_id: request.query("scopeId"),
                    status: request.query("status"),
                    kind: request.query("kind"),
                    model_id: request.query("modelId"),
                    created_after: request.query("createdAfter"),
                    created_before: request.query("createdBefore"),
                    after: request.query("after"),
                    limit: request.query("limit"),
                };
                let page = api::list_tasks(app, &tenant, query).await?;
                Ok(json_response(200, &TaskListAnswer::of(&page.tasks, page.next)))
            }
        },
        ("GET", ["v1", "tasks", task_id]) => {
            let wait = api::parse_wait(request.query("wait"))?;
            Ok(task_answer(200, &api::get_task(app, &tenant, task_id, wait).await?))
        }
        ("POST", ["v1", "tasks", task_id, "cancel"]) => {
            Ok(task_answer(200, &api::cancel_task(app, &tenant, task_id).await?))
        }
        // Holds.
        ("POST", ["v1", "holds"]) => {
            let (created, hold) = holds::place_hold(app, &tenant, &request.body()?).await?;
            Ok(json_response(if created { 201 } else { 200 }, &hold))
        }
        ("GET", ["v1", "holds"]) => {
            let query = HoldsQuery {
                state: request.query("state"),
                after: request.query("after"),
                limit: request.query("limit"),
            };
            Ok(json_response(200, &holds::list_holds(app, &tenant, query).await?))
        }
        ("GET", ["v1", "holds", hold_id]) => {
            Ok(json_response(200, &holds::get_hold(app, &tenant, hold_id).await?))
        }
        ("POST", ["v1", "holds", hold_id, "release"]) => {
            Ok(json_response(200, &holds::release_hold(app, &tenant, hold_id).await?))
        }
        _ => Err(ApiError::NoRoute),
    }
}

fn task_answer(status: u16, task: &Task) -> ApiGatewayV2httpResponse {
    aitasks_lambda_kit::note_task(task.id);
    json_response(status, &TaskAnswer::from(task))
}

fn run_answer(status: u16, run: &Run) -> ApiGatewayV2httpResponse {
    json_response(status, &RunAnswer::from(run))
}
