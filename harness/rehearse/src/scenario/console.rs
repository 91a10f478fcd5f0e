//! The web console (parameter `Console`): its two routes, with no authorizer and no token, serve
//! the page and a file with their content types and the Content-Security-Policy. The routes are
//! the only ones without the JWT authorizer, and exactly these two.

use serde_json::Value;

use super::Scenario;
use crate::events;

/// The function the `Console` parameter adds.
pub(super) const CONSOLE_FUNCTION: &str = "ConsoleFunction";

impl Scenario<'_> {
    pub(super) async fn console(&mut self) {
        if !self.rehearsal.deployment.functions.contains_key(CONSOLE_FUNCTION) {
            return;
        }
        let mut open: Vec<String> = self
            .rehearsal
            .deployment
            .routes
            .iter()
            .filter(|r| r.authorizer.is_none())
            .map(|r| format!("{} {} -> {}", r.method, r.path, r.function))
            .collect();
        open.sort();
        let expected = [
            format!("GET /console -> {CONSOLE_FUNCTION}"),
            format!("GET /console/{{proxy+}} -> {CONSOLE_FUNCTION}"),
        ];
        if open != expected {
            self.step(
                "HttpApi",
                "routes without an authorizer",
                Err(format!("{open:?}, expected {expected:?}")),
            );
        }
        for (template, path, content_type, needle) in [
            ("/console", "/console", "text/html; charset=utf-8", "<title>aitasks console</title>"),
            ("/console/{proxy+}", "/console/js/main.js", "text/javascript; charset=utf-8", "import "),
        ] {
            self.console_file(template, path, content_type, needle).await;
        }
    }

    async fn console_file(&mut self, template: &str, path: &str, content_type: &str, needle: &str) {
        let label = format!("GET {template}");
        let Some(route) = self
            .rehearsal
            .deployment
            .routes
            .iter()
            .find(|r| r.method == "GET" && r.path == template)
            .cloned()
        else {
            self.step("HttpApi", &label, Err(format!("the template routes no {label}")));
            return;
        };
        // No authorizer: API Gateway passes neither claims nor a token.
        let mut event = events::http_request(&route, "GET", path, &[], None, "app_id", "nobody");
        if let Some(context) = event["requestContext"].as_object_mut() {
            context.remove("authorizer");
        }
        if let Some(headers) = event["headers"].as_object_mut() {
            headers.remove("authorization");
        }
        let Some(answer) = self.invoke(&route.function, &label, event).await else { return };
        let header = |name: &str| answer["headers"][name].as_str().unwrap_or_default().to_owned();
        let body = answer["body"].as_str().unwrap_or_default();
        let status = answer["statusCode"].as_u64().unwrap_or(0);
        let csp = header("content-security-policy");
        let outcome = if status != 200 {
            Err(format!("answered {status}: {}", truncate(&answer["body"])))
        } else if header("content-type") != content_type {
            Err(format!("content-type {:?}, expected {content_type:?}", header("content-type")))
        } else if !csp.contains("default-src 'none'") || !csp.contains("script-src 'self'") {
            Err(format!("Content-Security-Policy {csp:?}"))
        } else if !body.contains(needle) {
            Err(format!("the body lacks {needle:?}"))
        } else {
            Ok("200".to_owned())
        };
        self.step(&route.function, &format!("{label} ({path})"), outcome);
    }
}

fn truncate(body: &Value) -> String {
    body.as_str().unwrap_or_default().chars().take(200).collect()
}
