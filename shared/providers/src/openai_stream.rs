//! OpenAI's streamed chat completion (`stream: true`, with `stream_options.include_usage` for
//! the usage): `chat.completion.chunk` events whose `choices[0].delta` carry the content (and a
//! refusal) piece by piece, the `finish_reason` at the end, the usage in a last chunk without
//! choices, then `[DONE]`. Put back together into the body a whole call answers with, for
//! [`crate::openai`]'s reader.

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::ProviderError;
use crate::sse::{event_json, Assemble, Event};
use crate::wire::{status_error, Call};

/// A `chat.completion.chunk` as nearly every one is: its model, usage, and first choice's delta
/// and finish reason.
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(borrow, default)]
    choices: Vec<Choice<'a>>,
    /// Present: not a common chunk (an error event midway).
    #[serde(default)]
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    refusal: Option<Cow<'a, str>>,
}

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
        // The common chunk, read into its few fields (the rest skipped, nothing allocated for
        // it): a piece of an answer is a small part of a chunk's bytes, and there is one chunk
        // a token. Anything else is read as JSON.
        if let Ok(chunk) = serde_json::from_str::<Chunk<'_>>(&event.data) {
            if chunk.error.is_none() {
                return Ok(self.chunk(call, chunk));
            }
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
        self.whole()
    }
}

impl OpenAiStream {
    /// A common chunk: its piece of the content told to the tap.
    fn chunk(&mut self, call: &Call<'_>, chunk: Chunk<'_>) -> bool {
        if let Some(model) = chunk.model {
            self.model = Some(Value::String(model.into_owned()));
        }
        if let Some(usage) = chunk.usage.filter(Value::is_object) {
            self.usage = Some(usage);
        }
        let Some(choice) = chunk.choices.into_iter().next() else { return true };
        if let Some(delta) = choice.delta {
            if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
                call.tap.text(&text);
                self.content.get_or_insert_with(String::new).push_str(&text);
            }
            if let Some(text) = delta.refusal {
                self.refusal.get_or_insert_with(String::new).push_str(&text);
            }
        }
        if let Some(reason) = choice.finish_reason {
            self.finish_reason = Some(Value::String(reason.into_owned()));
        }
        true
    }

    fn whole(self) -> Result<Value, ProviderError> {
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
