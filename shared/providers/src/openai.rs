//! OpenAI-compatible chat completions: `POST {baseUrl}/chat/completions` with
//! `response_format: json_schema` (strict), the profile's settings (temperature, the token
//! field, seed, reasoning effort), and the answer in `choices[0].message.content`. A `refusal`
//! or a `content_filter` stop is [`ProviderError::Refused`]; a `length` stop is
//! [`ProviderError::Truncated`]. A profile that streams (the default) asks `stream: true` and
//! reads the events ([`crate::openai_stream`]) into the same answer.

use aitasks_contracts::{schema_name, system_prompt, user_message, AiRequest};
use serde_json::{json, Value};

use crate::error::{said, ProviderError};
use crate::openai_stream::OpenAiStream;
use crate::profiles::ModelProfile;
use crate::sse::streamed_answer;
use crate::wire::{malformed, parse_answer, send, token_limit, Call, Turn, Wire};

pub(crate) struct OpenAi;

impl Wire for OpenAi {
    fn start(&self, request: &AiRequest) -> Vec<Value> {
        vec![
            json!({"role": "system", "content": system_prompt(request)}),
            json!({"role": "user", "content": user_message(request)}),
        ]
    }

    fn body(
        &self,
        profile: &ModelProfile,
        request: &AiRequest,
        schema: &Value,
        conversation: &[Value],
    ) -> Value {
        let settings = &profile.call;
        let mut body = json!({
            "model": profile.model,
            "messages": conversation,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema_name(request), "strict": true, "schema": schema},
            },
        });
        body[settings.token_limit_field.as_str()] = json!(token_limit(profile, request));
        if let Some(temperature) = settings.temperature {
            body["temperature"] = json!(temperature);
        }
        if let Some(seed) = settings.seed {
            body["seed"] = json!(seed);
        }
        if let Some(effort) = &settings.reasoning_effort {
            body["reasoning_effort"] = json!(effort);
        }
        body
    }

    fn read(&self, profile: &ModelProfile, request: &AiRequest, body: &Value) -> Result<Turn, ProviderError> {
        let choice = body.pointer("/choices/0").ok_or_else(|| malformed(profile, "choices[0]", body))?;
        let message = choice.get("message").ok_or_else(|| malformed(profile, "choices[0].message", body))?;
        if let Some(refusal) = message.get("refusal").and_then(Value::as_str) {
            // The model's own words may quote the prompt: DEBUG only.
            tracing::debug!(%refusal, "the model refused");
            return Err(ProviderError::Refused(said(None, "refusal", refusal)));
        }
        match choice.get("finish_reason").and_then(Value::as_str) {
            Some("length") => {
                return Err(ProviderError::Truncated { limit: u64::from(token_limit(profile, request)) })
            }
            Some("content_filter") => {
                return Err(ProviderError::Refused("the content filter stopped the answer".into()))
            }
            _ => {}
        }
        let content = message.get("content").and_then(Value::as_str);
        Ok(Turn {
            answer: parse_answer(content),
            reply: json!({"role": "assistant", "content": content.unwrap_or_default()}),
            input_tokens: body.pointer("/usage/prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
            output_tokens: body.pointer("/usage/completion_tokens").and_then(Value::as_u64).unwrap_or(0),
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
            body["stream_options"] = json!({"include_usage": true});
        }
        let mut http = call.http.post(format!("{}/chat/completions", profile.base_url)).json(&body);
        if let Some(key) = &profile.api_key {
            http = http.bearer_auth(key.expose());
        }
        let answer = match profile.stream {
            true => streamed_answer(call, http, OpenAiStream::default()).await?,
            false => send(call, http).await?,
        };
        self.read(profile, request, &answer)
    }

    fn repair(&self, conversation: &mut Vec<Value>, turn: Turn, problems: &str) {
        conversation.push(turn.reply);
        conversation.push(json!({
            "role": "user",
            "content": format!(
                "That answer was not valid: {problems}. Answer again with only a JSON object that matches the schema."
            ),
        }));
    }
}
