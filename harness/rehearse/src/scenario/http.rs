//! The rehearsal's HTTP calls: every route of the template through the JWT authorizer's event
//! shape, the batch and listing routes, and each path's `ANY` route asked with a method it does
//! not take.

use aitasks_contracts::TaskStatus;
use serde_json::{json, Value};

use super::{Ids, Scenario};
use crate::deployment::Route;
use crate::events;

use super::TENANT;

impl Scenario<'_> {
    fn route(&self, method: &str, path: &str) -> Option<Route> {
        self.rehearsal.deployment.routes.iter().find(|r| r.method == method && r.path == path).cloned()
    }

    /// Call one HTTP route; the parsed body when the status is `expected`.
    pub(super) async fn http(
        &mut self,
        method: &str,
        template: &str,
        path: &str,
        query: &[(&str, &str)],
        body: Option<Value>,
        expected: u16,
    ) -> Option<Value> {
        self.http_as(method, method, template, path, query, body, expected).await.map(|(body, _)| body)
    }

    /// A path's `ANY` route, called with a method the path does not take: 405, and `Allow`
    /// names the methods it does.
    async fn wrong_method(&mut self, template: &str, path: &str, sent: &str, allow: &str) {
        let label = format!("ANY {template}");
        let Some((_, headers)) = self.http_as("ANY", sent, template, path, &[], None, 405).await else {
            return;
        };
        let found = headers["allow"].as_str().or_else(|| headers["Allow"].as_str()).unwrap_or_default();
        if found != allow {
            self.step(
                "HttpApi",
                &format!("{label} Allow"),
                Err(format!("Allow {found:?}, expected {allow:?}")),
            );
        }
    }

    /// [`Self::http`] for `route_method`'s route, sent as `sent`; the body and the headers.
    #[allow(clippy::too_many_arguments)]
    async fn http_as(
        &mut self,
        route_method: &str,
        sent: &str,
        template: &str,
        path: &str,
        query: &[(&str, &str)],
        body: Option<Value>,
        expected: u16,
    ) -> Option<(Value, Value)> {
        let method = route_method;
        let label = format!("{method} {template}");
        let Some(route) = self.route(method, template) else {
            self.step("HttpApi", &label, Err(format!("the template routes no {label}")));
            return None;
        };
        if route.authorizer.is_none() {
            self.step(&route.function, &label, Err(format!("{label} has no JWT authorizer")));
        }
        let app_token_field = self
            .rehearsal
            .function(&route.function)
            .ok()
            .and_then(|f| f.environment.get("AITASK_APP_TOKEN_FIELD").cloned())
            .filter(|claim| !claim.is_empty())
            .unwrap_or_else(|| "app_id".to_owned());
        let event = events::http_request(&route, sent, path, query, body.as_ref(), &app_token_field, TENANT);
        let answer = self.invoke(&route.function, &label, event).await?;
        let status = answer["statusCode"].as_u64().unwrap_or(0) as u16;
        let parsed: Value =
            answer["body"].as_str().and_then(|b| serde_json::from_str(b).ok()).unwrap_or(Value::Null);
        if status == expected {
            self.step(&route.function, &label, Ok(format!("{status}")));
            Some((parsed, answer["headers"].clone()))
        } else {
            let tail = self.processes.get(&route.function).map(|p| p.log_tail(5)).unwrap_or_default();
            self.step(
                &route.function,
                &label,
                Err(format!("answered {status} (expected {expected}): {parsed}\n{tail}")),
            );
            None
        }
    }

    pub(super) async fn http_before_processing(&mut self) -> Option<Ids> {
        let run = self
            .http(
                "POST",
                "/v1/runs",
                "/v1/runs",
                &[],
                Some(json!({"scopeId": "rehearsal", "actor": {"userId": "u1"}})),
                201,
            )
            .await?;
        let run_id = run["id"].as_str()?.to_owned();
        self.http("GET", "/v1/runs/{runId}", &format!("/v1/runs/{run_id}"), &[], None, 200).await;
        let budget = json!({"burst": 10, "tasksPerMinute": 60, "maxStepsPerSource": 10, "sourcesPer24Hours": 10,
                            "scopeConcurrent": 10, "globalConcurrent": 100});
        let scoped = self
            .http(
                "POST",
                "/v1/tasks",
                "/v1/tasks",
                &[],
                Some(json!({
                "owner": {"scopeId": "docs", "usageSubject": {"type": "user", "id": "u1"}},
                "stepKey": "sentiment", "effectKey": "rehearsal/sentiment", "modelId": "default",
                "request": {"kind": "classify", "prompt": "Sentiment?", "input": {"text": "Great!"},
                            "choices": ["positive", "negative"]},
                "scope": {"sourceId": "doc-1", "sourceRevision": "r1", "budget": budget}})),
                201,
            )
            .await?;
        let scoped_task = scoped["id"].as_str()?.to_owned();
        let run_task = self
            .http("POST", "/v1/tasks", "/v1/tasks", &[], Some(json!({
                "runId": run_id, "stepKey": "summary", "effectKey": "rehearsal/summary", "modelId": "default",
                "request": {"kind": "generate_text", "prompt": "Summarize.", "input": {"text": "Long text."}}})), 201)
            .await?;
        let run_task = run_task["id"].as_str()?.to_owned();
        self.http("GET", "/v1/tasks/{taskId}", &format!("/v1/tasks/{scoped_task}"), &[], None, 200).await;
        self.http("GET", "/v1/tasks", "/v1/tasks", &[("effectKey", "rehearsal/sentiment")], None, 200).await;
        let canceled = self
            .http(
                "POST",
                "/v1/tasks/{taskId}/cancel",
                &format!("/v1/tasks/{run_task}/cancel"),
                &[],
                None,
                200,
            )
            .await;
        if let Some(task) = canceled {
            if task["status"] != TaskStatus::Canceled.as_str() {
                self.step(
                    "CreateTaskFunction",
                    "cancel of a queued task",
                    Err(format!("status {}", task["status"])),
                );
            }
        }
        self.batch_and_listing(&run_id).await;
        self.history(&run_id, &scoped_task).await;
        self.acting(&run_id, &run_task).await;
        self.http("POST", "/v1/runs/{runId}/cancel", &format!("/v1/runs/{run_id}/cancel"), &[], None, 200)
            .await;
        self.wrong_methods(&run_id, &scoped_task).await;
        Some(Ids { scoped_task, run_task })
    }

    /// A batch into the run (two new tasks, one refused item), then the run's tasks, listed.
    async fn batch_and_listing(&mut self, run_id: &str) {
        let item = |key: &str| {
            json!({"runId": run_id, "stepKey": "batch", "effectKey": key, "modelId": "default",
                   "request": {"kind": "generate_text", "prompt": "Summarize.", "input": {"text": key}}})
        };
        let body = json!({"tasks": [item("rehearsal/batch/1"), item("rehearsal/batch/2"), {"stepKey": "x"}]});
        if let Some(answer) =
            self.http("POST", "/v1/tasks/batch", "/v1/tasks/batch", &[], Some(body), 200).await
        {
            let statuses: Vec<u64> = answer["results"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r["status"].as_u64())
                .collect();
            if statuses != [201, 201, 400] {
                self.step("CreateTaskFunction", "batch items", Err(format!("item statuses {statuses:?}")));
            }
        }
        let query = [("runId", run_id), ("limit", "2")];
        if let Some(page) = self.http("GET", "/v1/tasks", "/v1/tasks", &query, None, 200).await {
            let listed = page["tasks"].as_array().map_or(0, Vec::len);
            if listed != 2 || page["next"].as_str().is_none() {
                self.step(
                    "CreateTaskFunction",
                    "run listing",
                    Err(format!("{listed} task(s), next {}", page["next"])),
                );
            }
        }
    }

    /// Live output (docs/api.md, "Live output") through the deployed API: the ended task's
    /// stream, kept after its end, read from 0: the retry's segment, final, the answer the task's
    /// output came from.
    pub(super) async fn live_output(&mut self, task_id: &str, output: &Value) {
        let path = format!("/v1/tasks/{task_id}/output");
        let Some(read) =
            self.http("GET", "/v1/tasks/{taskId}/output", &path, &[("wait", "1")], None, 200).await
        else {
            return;
        };
        let answer: Option<Value> = read["text"].as_str().and_then(|text| serde_json::from_str(text).ok());
        let outcome = match answer {
            Some(answer) if read["final"] == true && read["attempt"] == 2 && &answer["choice"] == output => {
                Ok(format!("segment {} of attempt 2, final: {}", read["segment"], read["text"]))
            }
            _ => Err(format!("expected the retry's whole streamed answer: {read}")),
        };
        self.step("CreateTaskFunction", "live output", outcome);
    }

    /// The read API for history: the runs, a task's attempts, events and callbacks, its batch (a
    /// task sent on-demand is in none: 404 `NOT_IN_BATCH`), and the tenant's summary.
    async fn history(&mut self, run_id: &str, task_id: &str) {
        if let Some(page) = self.http("GET", "/v1/runs", "/v1/runs", &[("limit", "100")], None, 200).await {
            let listed = page["runs"].as_array().into_iter().flatten().any(|run| run["id"] == run_id);
            if !listed {
                self.step("CreateTaskFunction", "run listing", Err(format!("{run_id} not in {page}")));
            }
        }
        let task = format!("/v1/tasks/{task_id}");
        self.http("GET", "/v1/tasks/{taskId}/attempts", &format!("{task}/attempts"), &[], None, 200).await;
        self.http("GET", "/v1/tasks/{taskId}/events", &format!("{task}/events"), &[], None, 200).await;
        self.http("GET", "/v1/tasks/{taskId}/callbacks", &format!("{task}/callbacks"), &[], None, 200).await;
        self.http("GET", "/v1/tasks/{taskId}/batch", &format!("{task}/batch"), &[], None, 404).await;
        self.http("GET", "/v1/summary", "/v1/summary", &[], None, 200).await;
        self.http("GET", "/v1/activity", "/v1/activity", &[], None, 200).await;
        self.http("GET", "/v1/runs/{runId}/progress", &format!("/v1/runs/{run_id}/progress"), &[], None, 200)
            .await;
    }

    /// Acting on tasks: a replay of the canceled task and its listing, an operation over the run
    /// (created, listed, read, stopped), and a hold of a scope (placed, listed, read, released).
    async fn acting(&mut self, run_id: &str, task_id: &str) {
        let task = format!("/v1/tasks/{task_id}");
        let replay = self
            .http("POST", "/v1/tasks/{taskId}/replay", &format!("{task}/replay"), &[], Some(json!({})), 201)
            .await;
        if let Some(replay) = replay {
            if replay["replayOf"] != json!(task_id) {
                self.step("CreateTaskFunction", "replay", Err(format!("replayOf {}", replay["replayOf"])));
            }
        }
        self.http("GET", "/v1/tasks/{taskId}/replays", &format!("{task}/replays"), &[], None, 200).await;
        let body = json!({"action": "cancel", "filter": {"runId": run_id, "status": ["queued"]}});
        let operation = self.http("POST", "/v1/operations", "/v1/operations", &[], Some(body), 202).await;
        if let Some(id) = operation.as_ref().and_then(|o| o["id"].as_str()).map(str::to_owned) {
            let path = format!("/v1/operations/{id}");
            self.http("GET", "/v1/operations", "/v1/operations", &[], None, 200).await;
            self.http("GET", "/v1/operations/{operationId}", &path, &[], None, 200).await;
            self.http("POST", "/v1/operations/{operationId}/stop", &format!("{path}/stop"), &[], None, 200)
                .await;
        }
        let body = json!({"scopeId": "rehearsal-held", "reason": "rehearsal"});
        let hold = self.http("POST", "/v1/holds", "/v1/holds", &[], Some(body), 201).await;
        if let Some(id) = hold.as_ref().and_then(|h| h["id"].as_str()).map(str::to_owned) {
            let path = format!("/v1/holds/{id}");
            self.http("GET", "/v1/holds", "/v1/holds", &[], None, 200).await;
            self.http("GET", "/v1/holds/{holdId}", &path, &[], None, 200).await;
            self.http("POST", "/v1/holds/{holdId}/release", &format!("{path}/release"), &[], None, 200).await;
        }
    }

    /// Every path's `ANY` route, asked with a method the path does not take.
    async fn wrong_methods(&mut self, run_id: &str, task_id: &str) {
        let (run, task) = (format!("/v1/runs/{run_id}"), format!("/v1/tasks/{task_id}"));
        let (operation, hold) = (
            "/v1/operations/0190d1c3-0000-7000-8000-000000000000",
            "/v1/holds/0190d1c3-0000-7000-8000-000000000000",
        );
        let calls: [(&str, String, &str, &str); 26] = [
            ("/v1/runs", "/v1/runs".into(), "DELETE", "GET, POST"),
            ("/v1/runs/{runId}", run.clone(), "DELETE", "GET"),
            ("/v1/runs/{runId}/cancel", format!("{run}/cancel"), "GET", "POST"),
            ("/v1/runs/{runId}/progress", format!("{run}/progress"), "POST", "GET"),
            ("/v1/tasks", "/v1/tasks".into(), "PUT", "GET, POST"),
            ("/v1/tasks/batch", "/v1/tasks/batch".into(), "GET", "POST"),
            ("/v1/tasks/{taskId}", task.clone(), "PATCH", "GET"),
            ("/v1/tasks/{taskId}/cancel", format!("{task}/cancel"), "GET", "POST"),
            ("/v1/tasks/{taskId}/events", format!("{task}/events"), "POST", "GET"),
            ("/v1/tasks/{taskId}/callbacks", format!("{task}/callbacks"), "POST", "GET"),
            ("/v1/tasks/{taskId}/batch", format!("{task}/batch"), "POST", "GET"),
            ("/v1/tasks/{taskId}/attempts", format!("{task}/attempts"), "POST", "GET"),
            ("/v1/summary", "/v1/summary".into(), "POST", "GET"),
            ("/v1/activity", "/v1/activity".into(), "POST", "GET"),
            ("/v1/tasks/release", "/v1/tasks/release".into(), "GET", "POST"),
            ("/v1/scopes/{scopeId}/tasks", "/v1/scopes/docs/tasks".into(), "GET", "DELETE"),
            ("/v1/unreleased-sources", "/v1/unreleased-sources".into(), "POST", "GET"),
            ("/v1/tasks/{taskId}/replay", format!("{task}/replay"), "GET", "POST"),
            ("/v1/tasks/{taskId}/replays", format!("{task}/replays"), "POST", "GET"),
            ("/v1/tasks/{taskId}/output", format!("{task}/output"), "POST", "GET"),
            ("/v1/operations", "/v1/operations".into(), "DELETE", "GET, POST"),
            ("/v1/operations/{operationId}", operation.into(), "DELETE", "GET"),
            ("/v1/operations/{operationId}/stop", format!("{operation}/stop"), "GET", "POST"),
            ("/v1/holds", "/v1/holds".into(), "DELETE", "GET, POST"),
            ("/v1/holds/{holdId}", hold.into(), "DELETE", "GET"),
            ("/v1/holds/{holdId}/release", format!("{hold}/release"), "GET", "POST"),
        ];
        for (template, path, sent, allow) in calls {
            self.wrong_method(template, &path, sent, allow).await;
        }
    }
}
