//! Anthropic's streamed Messages answer (`stream: true`): `message_start` (the model, the input
//! tokens), each content block opened by `content_block_start`, grown by `content_block_delta`
//! (`input_json_delta` for a tool's input, `text_delta` for text) and closed by
//! `content_block_stop`, then `message_delta` (the stop reason, the output tokens) and
//! `message_stop`; an `error` event midway (`overloaded_error`) is the error its status would
//! be. Put back together into the body a whole call answers with, for [`crate::anthropic`]'s
//! reader. The tap is told the answer tool's input as the model writes it.

use serde_json::{json, Map, Value};

use crate::error::ProviderError;
use crate::sse::{event_json, Assemble, Event};
use crate::wire::{status_error, Call};

/// How many content blocks an answer may open: the model is made to call one tool.
const MAX_BLOCKS: usize = 64;

pub(crate) struct AnthropicStream {
    /// The answer tool's name: only its input is the answer's text.
    tool: String,
    model: Option<Value>,
    input_tokens: Option<Value>,
    output_tokens: Option<Value>,
    stop_reason: Option<Value>,
    /// The content blocks by their index, in the order they were opened: the answer lists them
    /// so, and its first answer tool block is the one whose input the tap is told (a model that
    /// opens the tool twice has one answer, and its live text is that answer's alone).
    blocks: Vec<(u64, Block)>,
    /// The index of the first block opened that calls the answer tool.
    answering: Option<u64>,
}

struct Block {
    start: Map<String, Value>,
    /// A tool's input as written (JSON, read at the end), or a text block's text.
    written: String,
}

impl AnthropicStream {
    pub(crate) fn new(tool: String) -> AnthropicStream {
        AnthropicStream {
            tool,
            model: None,
            input_tokens: None,
            output_tokens: None,
            stop_reason: None,
            blocks: Vec::new(),
            answering: None,
        }
    }
}

impl Assemble for AnthropicStream {
    fn event(&mut self, call: &Call<'_>, event: Event) -> Result<bool, ProviderError> {
        let data = event_json(&event)?;
        let kind = data.get("type").and_then(Value::as_str).or(event.name.as_deref()).unwrap_or_default();
        match kind {
            "message_start" => {
                let message = &data["message"];
                self.model = message.get("model").filter(|m| m.is_string()).cloned();
                self.input_tokens = message.pointer("/usage/input_tokens").cloned();
                self.output_tokens = message.pointer("/usage/output_tokens").cloned();
            }
            "content_block_start" => {
                let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
                if self.blocks.iter().any(|(open, _)| *open == index) {
                    return Err(ProviderError::Malformed(format!(
                        "the streamed answer opened content block {index} twice"
                    )));
                }
                if self.blocks.len() >= MAX_BLOCKS {
                    return Err(ProviderError::Malformed(format!(
                        "the streamed answer opened more than {MAX_BLOCKS} content blocks"
                    )));
                }
                let start = data.get("content_block").and_then(Value::as_object).cloned().unwrap_or_default();
                let written = start.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
                let answers = start.get("type").and_then(Value::as_str) == Some("tool_use")
                    && start.get("name").and_then(Value::as_str) == Some(self.tool.as_str());
                if answers && self.answering.is_none() {
                    self.answering = Some(index);
                }
                self.blocks.push((index, Block { start, written }));
            }
            "content_block_delta" => {
                let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
                let Some((_, block)) = self.blocks.iter_mut().find(|(open, _)| *open == index) else {
                    return Ok(true);
                };
                let delta = &data["delta"];
                let piece = delta
                    .get("partial_json")
                    .or_else(|| delta.get("text"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if piece.is_empty() {
                    return Ok(true);
                }
                if self.answering == Some(index) {
                    call.tap.text(piece);
                }
                block.written.push_str(piece);
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").filter(|r| r.is_string()) {
                    self.stop_reason = Some(reason.clone());
                }
                if let Some(tokens) = data.pointer("/usage/output_tokens") {
                    self.output_tokens = Some(tokens.clone());
                }
            }
            "message_stop" => return Ok(false),
            "error" => {
                let code = data.pointer("/error/type").and_then(Value::as_str);
                let status = if code == Some("overloaded_error") { 529 } else { 500 };
                return Err(status_error(status, None, code, &data.to_string(), &call.profile.model));
            }
            // `ping`, `content_block_stop`, and events a newer API may add.
            _ => {}
        }
        Ok(true)
    }

    fn answer(self) -> Result<Value, ProviderError> {
        let content: Vec<Value> = self
            .blocks
            .into_iter()
            .map(|(_, Block { mut start, written })| {
                match start.get("type").and_then(Value::as_str) {
                    // The input as the model wrote it; written badly, it stays text, and the
                    // reader finds no object (a repair turn, as a whole answer's would be).
                    Some("tool_use") => {
                        let input = match written.trim() {
                            "" => json!({}),
                            text => serde_json::from_str(text).unwrap_or(Value::String(written)),
                        };
                        start.insert("input".into(), input);
                    }
                    _ => {
                        start.insert("text".into(), Value::String(written));
                    }
                }
                Value::Object(start)
            })
            .collect();
        let mut usage = json!({});
        if let Some(tokens) = self.input_tokens {
            usage["input_tokens"] = tokens;
        }
        if let Some(tokens) = self.output_tokens {
            usage["output_tokens"] = tokens;
        }
        let mut body = json!({"content": content, "stop_reason": self.stop_reason, "usage": usage});
        if let Some(model) = self.model {
            body["model"] = model;
        }
        Ok(body)
    }
}
