//! What the rehearsal found, per function: what the stack gives it, the AWS calls it made and
//! the statement that allowed each; then every step, and the verdict.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

use crate::aws_proxy::Call;
use crate::deployment::Function;
use crate::iam::Decision;
use crate::Rehearsal;

/// One thing the script did and how it went.
#[derive(Debug, Clone)]
pub struct Step {
    pub function: String,
    pub label: String,
    pub outcome: Result<String, String>,
}

/// The whole rehearsal.
#[derive(Debug, Clone)]
pub struct Report {
    pub template: String,
    pub functions: Vec<Function>,
    /// `(method path, function)` of every route, and the other triggers, for the summary.
    pub triggers: BTreeMap<String, Vec<String>>,
    pub steps: Vec<Step>,
    /// What AWS accepts but advises against (printed; not a problem).
    pub advice: Vec<String>,
    pub cold_starts: BTreeMap<String, Option<Duration>>,
    pub calls: Vec<Call>,
}

impl Report {
    pub fn new(rehearsal: &Rehearsal) -> Report {
        let deployment = &rehearsal.deployment;
        let mut triggers: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for route in &deployment.routes {
            let auth = route
                .authorizer
                .as_ref()
                .map(|a| format!("JWT from {} for {}", a.issuer, a.audience.join(",")))
                .unwrap_or_else(|| "NO AUTHORIZER".into());
            triggers.entry(route.function.clone()).or_default().push(format!(
                "HTTP API {} {} (payload {}, {auth})",
                route.method, route.path, route.payload_format
            ));
        }
        for mapping in &deployment.queue_mappings {
            triggers.entry(mapping.function.clone()).or_default().push(format!(
                "SQS {} (batch size {}, batching window {} s, ReportBatchItemFailures: {})",
                mapping.queue_arn,
                mapping.batch_size,
                mapping.batching_window_seconds,
                mapping.report_batch_item_failures
            ));
        }
        for schedule in &deployment.schedules {
            triggers
                .entry(schedule.function.clone())
                .or_default()
                .push(format!("EventBridge Scheduler {} ({})", schedule.logical_id, schedule.expression));
        }
        for rule in &deployment.event_rules {
            triggers.entry(rule.function.clone()).or_default().push(format!(
                "EventBridge rule {} ({}; {})",
                rule.logical_id,
                rule.pattern,
                if rule.permitted {
                    "its Lambda permission names the rule"
                } else {
                    "no Lambda permission for it"
                }
            ));
        }
        for resource in &deployment.custom_resources {
            let timeout = resource.properties["ServiceTimeout"].to_string();
            triggers.entry(resource.function.clone()).or_default().push(format!(
                "CloudFormation {} {} (ServiceTimeout {timeout})",
                resource.resource_type, resource.logical_id
            ));
        }
        Report {
            template: rehearsal.options.template.display().to_string(),
            functions: deployment.functions.values().cloned().collect(),
            triggers,
            steps: Vec::new(),
            advice: Vec::new(),
            cold_starts: BTreeMap::new(),
            calls: Vec::new(),
        }
    }

    pub fn finish(&mut self, calls: Vec<Call>) {
        self.calls = calls;
    }

    /// Everything that went wrong: refused AWS calls first, then failed steps.
    pub fn problems(&self) -> Vec<String> {
        let mut problems: Vec<String> = Vec::new();
        for call in &self.calls {
            if !call.decision.is_allowed() {
                let why = match &call.decision {
                    Decision::ExplicitlyDenied(by) => format!("denied by {by}"),
                    _ => "no statement of its role allows it".to_owned(),
                };
                let problem = format!(
                    "{} may not call {} on {} ({}, during {}): {why}",
                    call.function, call.action, call.resource, call.operation, call.phase
                );
                if !problems.contains(&problem) {
                    problems.push(problem);
                }
            }
        }
        for step in &self.steps {
            if let Err(error) = &step.outcome {
                problems.push(format!("{} {}: {error}", step.function, step.label));
            }
        }
        problems
    }

    pub fn passed(&self) -> bool {
        self.problems().is_empty()
    }

    /// The printed report.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Rehearsal of {} as `sam deploy` configures it (SAM transform by aws-sam-translator)",
            self.template
        );
        for function in &self.functions {
            let id = &function.logical_id;
            let _ = writeln!(
                out,
                "\n{id}  (binary {}, timeout {} s, {} MB, logs {} at {}, tracing {}, reserved concurrency {})",
                function.binary,
                function.timeout_seconds,
                function.memory_mb,
                function.log_format.as_deref().unwrap_or("Text"),
                function.application_log_level.as_deref().unwrap_or("-"),
                function.tracing.as_deref().unwrap_or("PassThrough"),
                function.reserved_concurrency.map(|n| n.to_string()).unwrap_or_else(|| "none".into()),
            );
            for trigger in self.triggers.get(id).into_iter().flatten() {
                let _ = writeln!(out, "  trigger      {trigger}");
            }
            let environment: Vec<String> = function
                .environment
                .iter()
                .map(|(k, v)| if v.is_empty() { format!("{k}=\"\"") } else { format!("{k}={v}") })
                .collect();
            let _ = writeln!(out, "  environment  {}", environment.join(" "));
            let _ = writeln!(
                out,
                "  role         {} ({} statements)",
                function.role_arn,
                function.statements.len()
            );
            match self.cold_starts.get(id) {
                Some(Some(ready)) => {
                    let _ = writeln!(
                        out,
                        "  cold start   {:.1} ms to the first invocation",
                        ready.as_secs_f64() * 1000.0
                    );
                }
                Some(None) => {
                    let _ = writeln!(out, "  cold start   FAILED");
                }
                None => {
                    let _ = writeln!(out, "  cold start   not started");
                }
            }
            let mut seen: BTreeMap<(String, String, String, String), (usize, Decision)> = BTreeMap::new();
            let mut order = Vec::new();
            for call in self.calls.iter().filter(|c| &c.function == id) {
                let key =
                    (call.phase.clone(), call.action.clone(), call.operation.clone(), call.resource.clone());
                let entry = seen.entry(key.clone()).or_insert_with(|| {
                    order.push(key.clone());
                    (0, call.decision.clone())
                });
                entry.0 += 1;
            }
            if order.is_empty() {
                let _ = writeln!(out, "  AWS calls    none");
            }
            for key in order {
                let (count, decision) = &seen[&key];
                let (phase, action, operation, resource) = key;
                let verdict = match decision {
                    Decision::Allowed(by) => format!("allowed by {by}"),
                    Decision::ExplicitlyDenied(by) => format!("REFUSED: denied by {by}"),
                    Decision::ImplicitlyDenied => "REFUSED: no statement allows it".to_owned(),
                };
                let times = if *count > 1 { format!(" x{count}") } else { String::new() };
                let _ = writeln!(
                    out,
                    "  AWS call     [{phase}] {action} ({operation}{times}) on {resource}: {verdict}"
                );
            }
        }
        if !self.advice.is_empty() {
            let _ = writeln!(out, "\nAdvice (AWS accepts this, and advises otherwise):");
            for advice in &self.advice {
                let _ = writeln!(out, "  - {advice}");
            }
        }
        let _ = writeln!(out, "\nSteps:");
        for step in &self.steps {
            match &step.outcome {
                Ok(detail) => {
                    let _ = writeln!(out, "  ok    {} {}: {}", step.function, step.label, first_line(detail));
                }
                Err(error) => {
                    let _ = writeln!(out, "  FAIL  {} {}: {}", step.function, step.label, first_line(error));
                }
            }
        }
        let problems = self.problems();
        if problems.is_empty() {
            let _ = writeln!(
                out,
                "\nPASSED: {} functions, {} AWS calls, every one allowed by the caller's own policy.",
                self.functions.len(),
                self.calls.len()
            );
        } else {
            let _ = writeln!(out, "\nFAILED: {} problem(s):", problems.len());
            for problem in problems {
                let _ = writeln!(out, "  - {problem}");
            }
        }
        out
    }
}

fn first_line(text: &str) -> &str {
    let line = text.lines().next().unwrap_or_default();
    &line[..line.len().min(240).min(line.char_indices().nth(240).map(|(i, _)| i).unwrap_or(line.len()))]
}
