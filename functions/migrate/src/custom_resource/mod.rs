//! CloudFormation's custom-resource protocol: the request a custom resource's function gets,
//! the answer it must `PUT` to the request's pre-signed `ResponseURL`, and the panic hook that
//! still answers when the function panics ([`install_panic_answer`]).

mod panic_answer;

use serde_json::{json, Value};

pub use panic_answer::{arm_panic_answer, install_panic_answer, Armed};

/// The answer's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseStatus {
    Success,
    Failed,
}

impl ResponseStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ResponseStatus::Success => "SUCCESS",
            ResponseStatus::Failed => "FAILED",
        }
    }
}

/// What a custom-resource request carries that the answer needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomResourceRequest {
    pub request_type: String,
    pub response_url: String,
    pub stack_id: String,
    pub request_id: String,
    pub logical_resource_id: String,
    pub physical_resource_id: Option<String>,
}

/// CloudFormation refuses answers over 4096 bytes; the reason is kept well under that.
const REASON_MAX_CHARS: usize = 1500;
/// The physical id of a resource that never had one (its create): the function's own, kept
/// across updates (CloudFormation replaces a resource whose physical id changes).
const PHYSICAL_ID: &str = "aitasks-migrations";

impl CustomResourceRequest {
    pub fn parse(event: &Value) -> Result<CustomResourceRequest, String> {
        let field = |name: &str| event.get(name).and_then(Value::as_str).map(str::to_owned);
        let response_url = field("ResponseURL")
            .filter(|url| !url.is_empty())
            .ok_or("not a CloudFormation custom-resource request (no ResponseURL)")?;
        Ok(CustomResourceRequest {
            request_type: field("RequestType").unwrap_or_default(),
            response_url,
            stack_id: field("StackId").unwrap_or_default(),
            request_id: field("RequestId").unwrap_or_default(),
            logical_resource_id: field("LogicalResourceId").unwrap_or_default(),
            physical_resource_id: field("PhysicalResourceId").filter(|id| !id.is_empty()),
        })
    }

    /// The answer document.
    pub fn response_body(&self, status: ResponseStatus, reason: &str) -> String {
        let reason: String = reason.chars().take(REASON_MAX_CHARS).collect();
        json!({
            "Status": status.as_str(),
            "Reason": reason,
            "PhysicalResourceId": self.physical_resource_id.as_deref().unwrap_or(PHYSICAL_ID),
            "StackId": self.stack_id,
            "RequestId": self.request_id,
            "LogicalResourceId": self.logical_resource_id,
        })
        .to_string()
    }

    /// `PUT` the answer (no content type: the pre-signed URL was signed without one).
    pub async fn respond(&self, status: ResponseStatus, reason: &str) -> Result<(), reqwest::Error> {
        reqwest::Client::new()
            .put(&self.response_url)
            .body(self.response_body(status, reason))
            .send()
            .await?
            .error_for_status()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_without_a_response_url_are_refused_and_answers_keep_the_physical_id() {
        assert!(CustomResourceRequest::parse(&json!({"RequestType": "Create"})).is_err());
        let request = CustomResourceRequest::parse(&json!({
            "RequestType": "Update", "ResponseURL": "https://bucket/key", "StackId": "stack",
            "RequestId": "r1", "LogicalResourceId": "Migrations", "PhysicalResourceId": "kept"
        }))
        .unwrap();
        let body: Value =
            serde_json::from_str(&request.response_body(ResponseStatus::Failed, &"x".repeat(5000))).unwrap();
        assert_eq!(body["Status"], "FAILED");
        assert_eq!(body["PhysicalResourceId"], "kept");
        assert_eq!(body["Reason"].as_str().unwrap().len(), REASON_MAX_CHARS);
    }
}
