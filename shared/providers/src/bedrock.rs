//! Amazon Bedrock through the Converse API (`aws-sdk-bedrockruntime`): credentials from the
//! function's IAM role (the SDK's chain, SigV4-signed), the answer schema as the input schema of
//! the one tool the model must call, the answer in that `toolUse` block's input. `max_tokens` is
//! [`ProviderError::Truncated`], a guardrail or content filter [`ProviderError::Refused`];
//! throttling and service errors are retryable, validation and access errors are not. The SDK's
//! own retries are off (the caller builds the client so): every retry is an attempt of ours.
//!
//! The conversation is kept in a small JSON form of our own (`{"role", "text"}`,
//! `{"role": "assistant", "toolUse": {...}}`, `{"role": "user", "toolResult": {...}}`) and
//! becomes the SDK's types for each call.

use aitasks_contracts::{schema_name, system_prompt, user_message, AiRequest};
use aws_sdk_bedrockruntime::config::http::HttpResponse;
use aws_sdk_bedrockruntime::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_bedrockruntime::operation::converse::ConverseError;
use aws_sdk_bedrockruntime::types::{
    ContentBlock, ConversationRole, ConverseOutput, InferenceConfiguration, Message, SpecificToolChoice,
    StopReason, SystemContentBlock, Tool, ToolChoice, ToolConfiguration, ToolInputSchema, ToolResultBlock,
    ToolResultContentBlock, ToolResultStatus, ToolSpecification, ToolUseBlock,
};
use aws_smithy_types::{Document, Number};
use serde_json::{json, Map, Value};

use crate::error::{said, ProviderError};
use crate::wire::{Call, Turn, Wire};

pub(crate) struct Bedrock;

impl Wire for Bedrock {
    fn start(&self, request: &AiRequest) -> Vec<Value> {
        vec![json!({"role": "user", "text": user_message(request)})]
    }

    async fn turn(
        &self,
        call: &Call<'_>,
        request: &AiRequest,
        schema: &Value,
        conversation: &[Value],
    ) -> Result<Turn, ProviderError> {
        let client = call.bedrock.ok_or_else(|| {
            ProviderError::Connection(
                "no Bedrock client: the worker was built without AWS configuration".into(),
            )
        })?;
        let (profile, settings) = (call.profile, &call.profile.call);
        let limit = call.token_limit(request);
        let tool = schema_name(request);
        let malformed =
            |what: &str| ProviderError::Malformed(format!("could not build the Converse request: {what}"));
        let spec = ToolSpecification::builder()
            .name(tool)
            .description("Record the answer.")
            .input_schema(ToolInputSchema::Json(document(schema)))
            .build()
            .map_err(|e| malformed(&e.to_string()))?;
        let choice =
            SpecificToolChoice::builder().name(tool).build().map_err(|e| malformed(&e.to_string()))?;
        let tools = ToolConfiguration::builder()
            .tools(Tool::ToolSpec(spec))
            .tool_choice(ToolChoice::Tool(choice))
            .build()
            .map_err(|e| malformed(&e.to_string()))?;
        let mut inference =
            InferenceConfiguration::builder().max_tokens(i32::try_from(limit).unwrap_or(i32::MAX));
        if let Some(temperature) = settings.temperature {
            inference = inference.temperature(temperature.min(1.0) as f32);
        }
        let messages =
            conversation.iter().map(message).collect::<Result<Vec<_>, _>>().map_err(|e| malformed(&e))?;
        let converse = client
            .converse()
            .model_id(&profile.model)
            .system(SystemContentBlock::Text(system_prompt(request)))
            .set_messages(Some(messages))
            .inference_config(inference.build())
            .tool_config(tools);
        // A profile's own `baseUrl` (a VPC endpoint, a test server) overrides the SDK's endpoint.
        let send = async {
            if profile.base_url.starts_with("http") {
                let endpoint = aws_sdk_bedrockruntime::config::Builder::new().endpoint_url(&profile.base_url);
                converse.customize().config_override(endpoint).send().await
            } else {
                converse.send().await
            }
        };
        let output = match tokio::time::timeout(call.timeout, send).await {
            Err(_) => return Err(ProviderError::Timeout(call.timeout)),
            Ok(result) => result.map_err(sdk_error)?,
        };
        match output.stop_reason() {
            StopReason::MaxTokens => return Err(ProviderError::Truncated { limit: u64::from(limit) }),
            StopReason::GuardrailIntervened | StopReason::ContentFiltered => {
                return Err(ProviderError::Refused(format!(
                    "Bedrock stopped the answer ({})",
                    output.stop_reason()
                )))
            }
            _ => {}
        }
        let blocks = match output.output() {
            Some(ConverseOutput::Message(message)) => message.content(),
            _ => return Err(ProviderError::Malformed("the Converse answer has no message".into())),
        };
        let tool_use = blocks.iter().find_map(|block| match block {
            ContentBlock::ToolUse(tool_use) if tool_use.name() == tool => Some(tool_use),
            _ => None,
        });
        let (answer, reply) = match tool_use {
            Some(tool_use) => {
                let input = value(tool_use.input());
                let answer = if input.is_object() {
                    Ok(input.clone())
                } else {
                    Err("the tool's input was not an object".to_owned())
                };
                let reply = json!({"role": "assistant", "toolUse": {"id": tool_use.tool_use_id(), "name": tool, "input": input}});
                (answer, reply)
            }
            None => {
                let text: String = blocks
                    .iter()
                    .filter_map(|b| if let ContentBlock::Text(t) = b { Some(t.as_str()) } else { None })
                    .collect();
                (
                    Err(format!("the answer did not call the {tool} tool")),
                    json!({"role": "assistant", "text": text}),
                )
            }
        };
        let usage = output.usage();
        Ok(Turn {
            answer,
            reply,
            input_tokens: usage.map(|u| u64::try_from(u.input_tokens()).unwrap_or(0)).unwrap_or(0),
            output_tokens: usage.map(|u| u64::try_from(u.output_tokens()).unwrap_or(0)).unwrap_or(0),
            model: None,
        })
    }

    fn repair(&self, conversation: &mut Vec<Value>, turn: Turn, problems: &str) {
        let tool_use_id = turn.reply["toolUse"]["id"].as_str().map(str::to_owned);
        conversation.push(turn.reply);
        let correction =
            format!("That answer was not valid: {problems}. Call the tool again with a valid answer.");
        conversation.push(match tool_use_id {
            Some(id) => json!({"role": "user", "toolResult": {"id": id, "text": correction}}),
            None => json!({"role": "user", "text": correction}),
        });
    }
}

/// One message of our conversation form as the SDK's.
fn message(entry: &Value) -> Result<Message, String> {
    let role =
        if entry["role"] == "assistant" { ConversationRole::Assistant } else { ConversationRole::User };
    let block = if let Some(tool_use) = entry.get("toolUse") {
        ContentBlock::ToolUse(
            ToolUseBlock::builder()
                .tool_use_id(tool_use["id"].as_str().unwrap_or_default())
                .name(tool_use["name"].as_str().unwrap_or_default())
                .input(document(&tool_use["input"]))
                .build()
                .map_err(|e| e.to_string())?,
        )
    } else if let Some(result) = entry.get("toolResult") {
        ContentBlock::ToolResult(
            ToolResultBlock::builder()
                .tool_use_id(result["id"].as_str().unwrap_or_default())
                .content(ToolResultContentBlock::Text(result["text"].as_str().unwrap_or_default().to_owned()))
                .status(ToolResultStatus::Error)
                .build()
                .map_err(|e| e.to_string())?,
        )
    } else {
        ContentBlock::Text(entry["text"].as_str().unwrap_or_default().to_owned())
    };
    Message::builder().role(role).content(block).build().map_err(|e| e.to_string())
}

/// Bedrock's errors in our classes: throttling (429) and service failures retryable, a bad
/// request or missing access not. The error names the service's code, and its words by size and
/// hash only (they may quote the request); never a key (the role's credentials are never part
/// of an error).
fn sdk_error(error: SdkError<ConverseError, HttpResponse>) -> ProviderError {
    if let SdkError::DispatchFailure(_) = &error {
        return ProviderError::Connection(
            aws_sdk_bedrockruntime::error::DisplayErrorContext(&error).to_string(),
        );
    }
    let status = error.raw_response().map(|response| response.status().as_u16());
    let code = error.code().unwrap_or("unknown").to_owned();
    let words = error.message().unwrap_or_default();
    tracing::debug!(code, message = words, "Bedrock's error");
    let message = said(Some(&code), "message", words);
    match (code.as_str(), status) {
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
}
