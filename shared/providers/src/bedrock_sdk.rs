//! The Converse API's JSON as the Bedrock SDK's types and back, shared by the whole call
//! ([`crate::bedrock`]) and the streamed one ([`crate::bedrock_stream`]): a call's Converse body
//! made into the SDK's request parts, the SDK's answer blocks made into Converse JSON, a
//! profile's own endpoint, and the SDK's errors in our classes.

use aws_sdk_bedrockruntime::config::http::HttpResponse;
use aws_sdk_bedrockruntime::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_bedrockruntime::types::{
    ContentBlock, ConversationRole, InferenceConfiguration, Message, SpecificToolChoice, SystemContentBlock,
    Tool, ToolChoice, ToolConfiguration, ToolInputSchema, ToolResultBlock, ToolResultContentBlock,
    ToolResultStatus, ToolSpecification, ToolUseBlock,
};
use aws_smithy_types::{Document, Number};
use serde_json::{json, Map, Value};

use crate::error::{said, ProviderError};
use crate::profiles::ModelProfile;

/// One call's Converse body (`{"messages", "system", "inferenceConfig", "toolConfig"}`) as the
/// SDK's request parts; Converse and ConverseStream take the same ones.
pub(crate) struct ConverseParts {
    pub messages: Vec<Message>,
    pub system: Vec<SystemContentBlock>,
    pub inference: InferenceConfiguration,
    pub tools: ToolConfiguration,
}

impl ConverseParts {
    pub(crate) fn of(body: &Value) -> Result<ConverseParts, ProviderError> {
        let malformed =
            |what: String| ProviderError::Malformed(format!("could not build the Converse request: {what}"));
        let messages = body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .map(message)
            .collect::<Result<Vec<_>, _>>()
            .map_err(malformed)?;
        let system = body["system"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|block| block["text"].as_str())
            .map(|text| SystemContentBlock::Text(text.to_owned()))
            .collect();
        let config = &body["inferenceConfig"];
        let mut inference = InferenceConfiguration::builder()
            .max_tokens(config["maxTokens"].as_i64().and_then(|n| i32::try_from(n).ok()).unwrap_or(i32::MAX));
        if let Some(temperature) = config["temperature"].as_f64() {
            inference = inference.temperature(temperature as f32);
        }
        let tools = tool_config(&body["toolConfig"]).map_err(malformed)?;
        Ok(ConverseParts { messages, system, inference: inference.build(), tools })
    }
}

/// A profile's own `baseUrl` (a VPC endpoint, a test server), which overrides the SDK's
/// endpoint; `None` for the SDK's own.
pub(crate) fn endpoint(profile: &ModelProfile) -> Option<aws_sdk_bedrockruntime::config::Builder> {
    profile
        .base_url
        .starts_with("http")
        .then(|| aws_sdk_bedrockruntime::config::Builder::new().endpoint_url(&profile.base_url))
}

/// One Converse message (JSON) as the SDK's: its text, tool-use and tool-result blocks.
fn message(entry: &Value) -> Result<Message, String> {
    let role =
        if entry["role"] == "assistant" { ConversationRole::Assistant } else { ConversationRole::User };
    let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
    let mut blocks = Vec::new();
    for block in entry["content"].as_array().into_iter().flatten() {
        if let Some(tool_use) = block.get("toolUse") {
            blocks.push(ContentBlock::ToolUse(
                ToolUseBlock::builder()
                    .tool_use_id(text(&tool_use["toolUseId"]))
                    .name(text(&tool_use["name"]))
                    .input(document(&tool_use["input"]))
                    .build()
                    .map_err(|e| e.to_string())?,
            ));
        } else if let Some(result) = block.get("toolResult") {
            let status =
                if result["status"] == "error" { ToolResultStatus::Error } else { ToolResultStatus::Success };
            let mut built = ToolResultBlock::builder().tool_use_id(text(&result["toolUseId"])).status(status);
            for item in result["content"].as_array().into_iter().flatten() {
                built = built.content(ToolResultContentBlock::Text(text(&item["text"])));
            }
            blocks.push(ContentBlock::ToolResult(built.build().map_err(|e| e.to_string())?));
        } else if let Some(words) = block.get("text") {
            blocks.push(ContentBlock::Text(text(words)));
        }
    }
    Message::builder().role(role).set_content(Some(blocks)).build().map_err(|e| e.to_string())
}

/// The Converse `toolConfig` (JSON) as the SDK's: the one tool and the choice of it.
fn tool_config(config: &Value) -> Result<ToolConfiguration, String> {
    let spec = &config["tools"][0]["toolSpec"];
    let name = spec["name"].as_str().unwrap_or_default();
    let spec = ToolSpecification::builder()
        .name(name)
        .set_description(spec["description"].as_str().map(str::to_owned))
        .input_schema(ToolInputSchema::Json(document(&spec["inputSchema"]["json"])))
        .build()
        .map_err(|e| e.to_string())?;
    let chosen = config["toolChoice"]["tool"]["name"].as_str().unwrap_or(name);
    let choice = SpecificToolChoice::builder().name(chosen).build().map_err(|e| e.to_string())?;
    ToolConfiguration::builder()
        .tools(Tool::ToolSpec(spec))
        .tool_choice(ToolChoice::Tool(choice))
        .build()
        .map_err(|e| e.to_string())
}

/// One block of the SDK's answer as Converse JSON (text and tool use; others are left out).
pub(crate) fn block_json(block: &ContentBlock) -> Option<Value> {
    match block {
        ContentBlock::Text(text) => Some(json!({"text": text})),
        ContentBlock::ToolUse(tool_use) => Some(json!({"toolUse": {
            "toolUseId": tool_use.tool_use_id(), "name": tool_use.name(), "input": value(tool_use.input())}})),
        _ => None,
    }
}

/// Bedrock's errors in our classes: throttling (429) and service failures retryable, a bad
/// request or missing access not. The error names the service's code, and its words by size and
/// hash only (they may quote the request); never a key (the role's credentials are never part
/// of an error).
pub(crate) fn sdk_error<E>(error: SdkError<E, HttpResponse>) -> ProviderError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    if let SdkError::DispatchFailure(_) = &error {
        return ProviderError::Connection(DisplayErrorContext(&error).to_string());
    }
    let status = error.raw_response().map(|response| response.status().as_u16());
    let code = error.code().unwrap_or("unknown").to_owned();
    classify(&code, status, error.message().unwrap_or_default())
}

/// A Bedrock error by its code and HTTP status (when it had one), with what it said.
pub(crate) fn classify(code: &str, status: Option<u16>, words: &str) -> ProviderError {
    tracing::debug!(code, message = words, "Bedrock's error");
    let message = said(Some(code), "message", words);
    match (code, status) {
        ("ThrottlingException", _) | (_, Some(429)) => {
            ProviderError::RateLimited { retry_after: None, message }
        }
        ("AccessDeniedException" | "UnrecognizedClientException" | "InvalidSignatureException", _)
        | (_, Some(401 | 403)) => ProviderError::Auth { status: status.unwrap_or(403) },
        ("ResourceNotFoundException", _) | (_, Some(404)) => ProviderError::ModelUnknown(message),
        ("ModelTimeoutException", _) | (_, Some(408)) => ProviderError::Server { status: 408, message },
        (_, Some(status)) if status >= 500 || status == 424 => ProviderError::Server { status, message },
        (_, Some(status)) => ProviderError::Rejected { status, message },
        (_, None) => ProviderError::Malformed(message),
    }
}

/// JSON as a Smithy document (the tool's input schema, a replayed tool input).
fn document(value: &Value) -> Document {
    match value {
        Value::Null => Document::Null,
        Value::Bool(b) => Document::Bool(*b),
        Value::Number(n) => Document::Number(if let Some(u) = n.as_u64() {
            Number::PosInt(u)
        } else if let Some(i) = n.as_i64() {
            Number::NegInt(i)
        } else {
            Number::Float(n.as_f64().unwrap_or_default())
        }),
        Value::String(s) => Document::String(s.clone()),
        Value::Array(items) => Document::Array(items.iter().map(document).collect()),
        Value::Object(map) => Document::Object(map.iter().map(|(k, v)| (k.clone(), document(v))).collect()),
    }
}

/// A Smithy document as JSON (the model's tool input).
fn value(document: &Document) -> Value {
    match document {
        Document::Null => Value::Null,
        Document::Bool(b) => Value::Bool(*b),
        Document::Number(Number::PosInt(u)) => json!(u),
        Document::Number(Number::NegInt(i)) => json!(i),
        Document::Number(Number::Float(f)) => json!(f),
        Document::String(s) => Value::String(s.clone()),
        Document::Array(items) => Value::Array(items.iter().map(value).collect()),
        Document::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), value(v))).collect::<Map<_, _>>())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_survives_the_trip_through_a_document() {
        let original = json!({"a": [1, -2, 2.5, "x", null, true], "b": {"c": {}}});
        assert_eq!(value(&document(&original)), original);
    }

    #[test]
    fn a_converse_message_in_json_becomes_the_sdk_s() {
        let entry = json!({"role": "user", "content": [
            {"toolResult": {"toolUseId": "t1", "content": [{"text": "bad"}], "status": "error"}}, {"text": "again"}]});
        let built = message(&entry).unwrap();
        assert_eq!(built.role(), &ConversationRole::User);
        assert_eq!(built.content().len(), 2);
        assert!(matches!(&built.content()[0], ContentBlock::ToolResult(r) if r.tool_use_id() == "t1"));
    }
}
