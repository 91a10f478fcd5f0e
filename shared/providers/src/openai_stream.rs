//! OpenAI's streamed chat completion (`stream: true`, with `stream_options.include_usage` for
//! the usage): `chat.completion.chunk` events whose `choices[0].delta` carry the content (and a
//! refusal) piece by piece, the `finish_reason` at the end, the usage in a last chunk without
//! choices, then `[DONE]`. Put back together into the body a whole call answers with, for
//! [`crate::openai`]'s reader.

use serde_json::{json, Value};

use crate::error::ProviderError;
use crate::sse::{event_json, Assemble, Event};
use crate::wire::{status_error, Call};

#[derive(Default)]
pub(crate) struct OpenAiStream {
    content: Option<String>,
    refusal: Option<String>,
    finish_reason: Option<Value>,
    usage: Option<Value>,
    model: Option<Value>,
}

impl Assemble for OpenAiStream {
    fn event(&mut self, call: &Call<'_>, event: Event) -> Result<bool, ProviderError> {
        if event.data.trim() == "[DONE]" {
            return Ok(false);
        }
        let chunk = event_json(&event)?;
        if let Some(error) = chunk.get("error") {
            // An error midway (some servers send one instead of closing): a server error.
            let code = ["code", "type"].iter().find_map(|k| error.get(*k).and_then(Value::as_str));
            return Err(status_error(500, None, code, &error.to_string(), &call.profile.model));
        }
        if let Some(model) = chunk.get("model").filter(|m| m.is_string()) {
            self.model = Some(model.clone());
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage.clone());
        }
        let Some(choice) = chunk.pointer("/choices/0") else { return Ok(true) };
        if let Some(text) = choice.pointer("/delta/content").and_then(Value::as_str) {
            if !text.is_empty() {
                call.tap.text(text);
                self.content.get_or_insert_with(String::new).push_str(text);
            }
        }
        if let Some(text) = choice.pointer("/delta/refusal").and_then(Value::as_str) {
            self.refusal.get_or_insert_with(String::new).push_str(text);
        }
        if let Some(reason) = choice.get("finish_reason").filter(|r| r.is_string()) {
            self.finish_reason = Some(reason.clone());
        }
        Ok(true)
    }

    fn answer(self) -> Result<Value, ProviderError> {
        let mut message = json!({"role": "assistant", "content": self.content});
        if let Some(refusal) = self.refusal {
            message["refusal"] = json!(refusal);
        }
        let mut body = json!({
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
        });
        if let Some(usage) = self.usage {
            body["usage"] = usage;
        }
        if let Some(model) = self.model {
            body["model"] = model;
        }
        Ok(body)
    }
}
