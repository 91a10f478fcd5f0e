//! Anthropic's Messages API, natively: `POST {baseUrl}/messages` with `x-api-key` and
//! `anthropic-version`, the answer schema as the input schema of the one tool the model must
//! call (`tool_choice`), and the answer in that `tool_use` block's `input`. A repair turn
//! returns the problems as the tool's error result. `stop_reason: max_tokens` is
//! [`ProviderError::Truncated`], `refusal` is [`ProviderError::Refused`]; 429 (with its
//! `retry-after`) and 529 `overloaded_error` are retryable like every 5xx. A profile that
//! streams (the default) reads the events ([`crate::anthropic_stream`]) into the same answer.

use aitasks_contracts::{schema_name, system_prompt, user_message, AiRequest};
use serde_json::{json, Value};

use crate::anthropic_stream::AnthropicStream;
use crate::error::ProviderError;
use crate::profiles::ModelProfile;
use crate::sse::streamed_answer;
use crate::wire::{malformed, send, token_limit, Call, Turn, Wire};

/// The API version every request names.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

pub(crate) struct Anthropic;

impl Wire for Anthropic {
    fn start(&self, request: &AiRequest) -> Vec<Value> {
        vec![json!({"role": "user", "content": user_message(request)})]
    }

    fn body(
        &self,
        profile: &ModelProfile,
        request: &AiRequest,
        schema: &Value,
        conversation: &[Value],
    ) -> Value {
        let tool = schema_name(request);
        let mut body = json!({
            "model": profile.model,
            "max_tokens": token_limit(profile, request),
            "system": system_prompt(request),
            "messages": conversation,
            "tools": [{"name": tool, "description": "Record the answer.", "input_schema": schema}],
            "tool_choice": {"type": "tool", "name": tool},
        });
        if let Some(temperature) = profile.call.temperature {
            // Anthropic's range is 0 to 1.
            body["temperature"] = json!(temperature.min(1.0));
        }
        body
    }

    fn read(&self, profile: &ModelProfile, request: &AiRequest, body: &Value) -> Result<Turn, ProviderError> {
        match body.get("stop_reason").and_then(Value::as_str) {
            Some("max_tokens") => {
                return Err(ProviderError::Truncated { limit: u64::from(token_limit(profile, request)) })
            }
            Some("refusal") => {
                return Err(ProviderError::Refused("the model declined (stop_reason: refusal)".into()))
            }
            _ => {}
        }
        let tool = schema_name(request);
        let content = body
            .get("content")
            .and_then(Value::as_array)
            .ok_or_else(|| malformed(profile, "content", body))?;
        let tool_use = content.iter().find(|block| block["type"] == "tool_use" && block["name"] == tool);
        let answer = match tool_use {
            Some(block) if block["input"].is_object() => Ok(block["input"].clone()),
            Some(_) => Err("the tool's input was not an object".to_owned()),
            None => Err(format!("the answer did not call the {tool} tool")),
        };
        Ok(Turn {
            answer,
            reply: json!({"role": "assistant", "content": content}),
            input_tokens: body.pointer("/usage/input_tokens").and_then(Value::as_u64).unwrap_or(0),
            output_tokens: body.pointer("/usage/output_tokens").and_then(Value::as_u64).unwrap_or(0),
            model: body.get("model").and_then(Value::as_str).map(str::to_owned),
        })
    }

    async fn turn(
        &self,
        call: &Call<'_>,
        request: &AiRequest,
        schema: &Value,
        conversation: &[Value],
    ) -> Result<Turn, ProviderError> {
        let profile = call.profile;
        let mut body = self.body(profile, request, schema, conversation);
        if profile.stream {
            body["stream"] = json!(true);
        }
        let mut http = call
            .http
            .post(format!("{}/messages", profile.base_url))
            .header("anthropic-version", ANTHROPIC_VERSION)
            .json(&body);
        if let Some(key) = &profile.api_key {
            http = http.header("x-api-key", key.expose());
        }
        let answer = match profile.stream {
            true => {
                streamed_answer(call, http, AnthropicStream::new(schema_name(request).to_owned())).await?
            }
            false => send(call, http).await?,
        };
        self.read(profile, request, &answer)
    }

    fn repair(&self, conversation: &mut Vec<Value>, turn: Turn, problems: &str) {
        let tool_use_id = turn.reply["content"]
            .as_array()
            .and_then(|blocks| blocks.iter().find(|b| b["type"] == "tool_use"))
            .and_then(|block| block["id"].as_str())
            .map(str::to_owned);
        conversation.push(turn.reply);
        let correction =
            format!("That answer was not valid: {problems}. Call the tool again with a valid answer.");
        conversation.push(match tool_use_id {
            // A tool call must be answered by its result.
            Some(id) => json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "is_error": true, "content": correction}]}),
            None => json!({"role": "user", "content": correction}),
        });
    }
}
