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
//! batch record's `modelOutput`) and read: one body and one reader for both paths. A profile
//! that streams (the default) sends the same request through ConverseStream and assembles its
//! events ([`crate::bedrock_stream`]) into that same answer.

use aitasks_contracts::{schema_name, system_prompt, user_message, AiRequest};
use aws_sdk_bedrockruntime::types::ConverseOutput;
use serde_json::{json, Value};

use crate::bedrock_sdk::{block_json, endpoint, sdk_error, ConverseParts};
use crate::bedrock_stream::converse_stream;
use crate::error::ProviderError;
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
        let parts = ConverseParts::of(&self.body(profile, request, schema, conversation))?;
        let answer = match profile.stream {
            true => converse_stream(call, client, parts, schema_name(request)).await?,
            false => converse(call, client, parts).await?,
        };
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

/// One Converse call, its answer as Converse JSON.
async fn converse(
    call: &Call<'_>,
    client: &aws_sdk_bedrockruntime::Client,
    parts: ConverseParts,
) -> Result<Value, ProviderError> {
    let converse = client
        .converse()
        .model_id(&call.profile.model)
        .set_system(Some(parts.system))
        .set_messages(Some(parts.messages))
        .inference_config(parts.inference)
        .tool_config(parts.tools);
    let send = async {
        match endpoint(call.profile) {
            Some(endpoint) => converse.customize().config_override(endpoint).send().await,
            None => converse.send().await,
        }
    };
    let output = match tokio::time::timeout(call.timeout, send).await {
        Err(_) => return Err(ProviderError::Timeout(call.timeout)),
        Ok(result) => result.map_err(sdk_error)?,
    };
    let content: Vec<Value> = match output.output() {
        Some(ConverseOutput::Message(message)) => message.content().iter().filter_map(block_json).collect(),
        _ => return Err(ProviderError::Malformed("the Converse answer has no message".into())),
    };
    let usage = output.usage();
    Ok(json!({
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": output.stop_reason().as_str(),
        "usage": {
            "inputTokens": usage.map_or(0, |u| u.input_tokens().max(0)),
            "outputTokens": usage.map_or(0, |u| u.output_tokens().max(0)),
        },
    }))
}
