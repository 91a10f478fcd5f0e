//! Amazon Bedrock through the Converse API (`aws-sdk-bedrockruntime`): credentials from the
//! function's IAM role (the SDK's chain, SigV4-signed), the answer schema as the input schema of
//! the one tool the model must call, the answer in that `toolUse` block's input. `max_tokens` is
//! [`ProviderError::Truncated`], a guardrail or content filter [`ProviderError::Refused`];
//! throttling and service errors are retryable, validation and access errors are not. The SDK's
//! own retries are off (the caller builds the client so): every retry is an attempt of ours.
//!
//! A call is Converse-shaped JSON (`{"messages", "system", "inferenceConfig", "toolConfig"}`,
//! the `modelInput` of a batch record) made into the SDK's types, and its answer the SDK's
//! output made into Converse-shaped JSON (`{"output": {"message"}, "stopReason", "usage"}`, a
//! batch record's `modelOutput`) and read: one body and one reader for both paths.

use aitasks_contracts::{schema_name, system_prompt, user_message, AiRequest};
use aws_sdk_bedrockruntime::config::http::HttpResponse;
use aws_sdk_bedrockruntime::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_bedrockruntime::operation::converse::ConverseError;
use aws_sdk_bedrockruntime::types::{
    ContentBlock, ConversationRole, ConverseOutput, InferenceConfiguration, Message, SpecificToolChoice,
    SystemContentBlock, Tool, ToolChoice, ToolConfiguration, ToolInputSchema, ToolResultBlock,
    ToolResultContentBlock, ToolResultStatus, ToolSpecification, ToolUseBlock,
};
use aws_smithy_types::{Document, Number};
use serde_json::{json, Map, Value};

use crate::error::{said, ProviderError};
use crate::profiles::ModelProfile;
use crate::wire::{malformed, token_limit, Call, Turn, Wire};

pub(crate) struct Bedrock;

impl Wire for Bedrock {
    fn start(&self, request: &AiRequest) -> Vec<Value> {
        vec![json!({"role": "user", "content": [{"text": user_message(request)}]})]
    }

    fn body(
        &self,
        profile: &ModelProfile,
        request: &AiRequest,
        schema: &Value,
        conversation: &[Value],
    ) -> Value {
        let tool = schema_name(request);
        let mut inference = json!({"maxTokens": token_limit(profile, request)});
        if let Some(temperature) = profile.call.temperature {
            inference["temperature"] = json!(temperature.min(1.0));
        }
        json!({
            "messages": conversation,
            "system": [{"text": system_prompt(request)}],
            "inferenceConfig": inference,
            "toolConfig": {
                "tools": [{"toolSpec": {"name": tool, "description": "Record the answer.", "inputSchema": {"json": schema}}}],
                "toolChoice": {"tool": {"name": tool}},
            },
        })
    }

    fn read(&self, profile: &ModelProfile, request: &AiRequest, body: &Value) -> Result<Turn, ProviderError> {
        match body.get("stopReason").and_then(Value::as_str) {
            Some("max_tokens") => {
                return Err(ProviderError::Truncated { limit: u64::from(token_limit(profile, request)) })
            }
            Some(reason @ ("guardrail_intervened" | "content_filtered")) => {
                return Err(ProviderError::Refused(format!("Bedrock stopped the answer ({reason})")))
            }
            _ => {}
        }
        let tool = schema_name(request);
        let content = body
            .pointer("/output/message/content")
            .and_then(Value::as_array)
            .ok_or_else(|| malformed(profile, "output.message.content", body))?;
        let tool_use =
            content.iter().map(|block| &block["toolUse"]).find(|tool_use| tool_use["name"] == tool);
        let answer = match tool_use {
            Some(tool_use) if tool_use["input"].is_object() => Ok(tool_use["input"].clone()),
            Some(_) => Err("the tool's input was not an object".to_owned()),
            None => Err(format!("the answer did not call the {tool} tool")),
        };
        // What the model said, replayed: its text and tool calls.
        let replayed: Vec<Value> = content
            .iter()
            .filter(|block| block.get("text").is_some() || block.get("toolUse").is_some())
            .cloned()
            .collect();
        let tokens =
            |name: &str| body.pointer(&format!("/usage/{name}")).and_then(Value::as_u64).unwrap_or(0);
        Ok(Turn {
            answer,
            reply: json!({"role": "assistant", "content": replayed}),
            input_tokens: tokens("inputTokens"),
            output_tokens: tokens("outputTokens"),
            model: None,
        })
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
        let profile = call.profile;
        let body = self.body(profile, request, schema, conversation);
        let malformed =
            |what: String| ProviderError::Malformed(format!("could not build the Converse request: {what}"));
        let messages = body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .map(message)
            .collect::<Result<Vec<_>, _>>()
            .map_err(malformed)?;
        let system: Vec<SystemContentBlock> = body["system"]
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
        let converse = client
            .converse()
            .model_id(&profile.model)
            .set_system(Some(system))
            .set_messages(Some(messages))
            .inference_config(inference.build())
            .tool_config(tool_config(&body["toolConfig"]).map_err(malformed)?);
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
        let content: Vec<Value> = match output.output() {
            Some(ConverseOutput::Message(message)) => {
                message.content().iter().filter_map(block_json).collect()
            }
            _ => return Err(ProviderError::Malformed("the Converse answer has no message".into())),
        };
        let usage = output.usage();
        let answer = json!({
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": output.stop_reason().as_str(),
            "usage": {
                "inputTokens": usage.map_or(0, |u| u.input_tokens().max(0)),
                "outputTokens": usage.map_or(0, |u| u.output_tokens().max(0)),
            },
        });
        self.read(profile, request, &answer)
    }

    fn repair(&self, conversation: &mut Vec<Value>, turn: Turn, problems: &str) {
        let tool_use_id = turn.reply["content"]
            .as_array()
            .and_then(|blocks| blocks.iter().find_map(|b| b["toolUse"]["toolUseId"].as_str()))
            .map(str::to_owned);
        conversation.push(turn.reply);
        let correction =
            format!("That answer was not valid: {problems}. Call the tool again with a valid answer.");
        conversation.push(match tool_use_id {
            // A tool call must be answered by its result.
            Some(id) => json!({"role": "user", "content": [{"toolResult": {
                "toolUseId": id, "content": [{"text": correction}], "status": "error"}}]}),
            None => json!({"role": "user", "content": [{"text": correction}]}),
        });
    }
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
fn block_json(block: &ContentBlock) -> Option<Value> {
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
