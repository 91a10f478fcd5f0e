//! `create-task`, behind API Gateway: runs and tasks. Parses the event, calls the runtime,
//! maps the result; nothing else.

use aitasks_lambda_kit::{json_response, serve_http, ApiError, HttpRequest};
use aitasks_runtime::answers::{RunAnswer, TaskAnswer};
use aitasks_runtime::{api, App};
use aitasks_store::{Run, Task};
use aws_lambda_events::apigw::{ApiGatewayV2httpRequest, ApiGatewayV2httpResponse};
use lambda_runtime::{Error, LambdaEvent};

/// Handle one API Gateway HTTP API request.
pub async fn handle<P>(
    app: &App<P>,
    event: LambdaEvent<ApiGatewayV2httpRequest>,
) -> Result<ApiGatewayV2httpResponse, Error> {
    Ok(serve_http(&event.payload, |request| async move { route(app, &request).await }).await)
}

async fn route<P>(app: &App<P>, request: &HttpRequest<'_>) -> Result<ApiGatewayV2httpResponse, ApiError> {
    let tenant = request.tenant(&app.settings.app_claim)?;
    let segments = request.segments();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let method = request.method().as_str();
    match (method, segments.as_slice()) {
        ("POST", ["v1", "runs"]) => {
            Ok(run_answer(201, &api::create_run(app, &tenant, &request.body()?).await?))
        }
        ("GET", ["v1", "runs", run_id]) => Ok(run_answer(200, &api::get_run(app, &tenant, run_id).await?)),
        ("POST", ["v1", "runs", run_id, "cancel"]) => {
            Ok(run_answer(200, &api::cancel_run(app, &tenant, run_id).await?))
        }
        ("POST", ["v1", "tasks"]) => {
            let created = api::create_task(app, &tenant, &request.body()?).await?;
            Ok(task_answer(if created.is_new() { 201 } else { 200 }, created.task()))
        }
        ("GET", ["v1", "tasks"]) => Ok(task_answer(
            200,
            &api::get_task_by_effect_key(app, &tenant, request.query("effectKey")).await?,
        )),
        ("GET", ["v1", "tasks", task_id]) => {
            let wait = api::parse_wait(request.query("wait"))?;
            Ok(task_answer(200, &api::get_task(app, &tenant, task_id, wait).await?))
        }
        ("POST", ["v1", "tasks", task_id, "cancel"]) => {
            Ok(task_answer(200, &api::cancel_task(app, &tenant, task_id).await?))
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
