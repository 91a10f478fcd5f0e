//! Bedrock's streamed Converse answer (ConverseStream, the AWS event-stream framing the SDK
//! decodes): `messageStart`, each content block opened by `contentBlockStart` (a tool use's id
//! and name; a text block has none), grown by `contentBlockDelta` (`toolUse.input` pieces of a
//! tool's input JSON, `text` pieces) and closed by `contentBlockStop`, then `messageStop` (the
//! stop reason) and `metadata` (the usage). An exception event midway (`throttlingException`,
//! `modelStreamErrorException`, `internalServerException`, `serviceUnavailableException`,
//! `validationException`) is the error the same exception of a Converse call is. Put back
//! together into the Converse JSON a whole call answers with, for [`crate::bedrock`]'s reader;
//! the tap is told the answer tool's input as the model writes it.
//!
//! Bounded as a streamed HTTP answer is: the body at most [`crate::wire::MAX_RESPONSE_BYTES`]
//! ([`crate::bedrock_bound`]), at most [`MAX_BLOCKS`] blocks, and the call's timeout over the
//! whole stream, so one that stalls midway ends as a stalled Converse call does
//! ([`ProviderError::Timeout`]).

use std::time::Duration;

use aws_sdk_bedrockruntime::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_bedrockruntime::types::error::ConverseStreamOutputError;
use aws_sdk_bedrockruntime::types::{ContentBlockDelta, ContentBlockStart, ConverseStreamOutput};
use aws_smithy_types::event_stream::RawMessage;
use serde_json::{json, Value};

use crate::bedrock_bound::{too_long, BoundBody, TooLong};
use crate::bedrock_sdk::{classify, endpoint, sdk_error, ConverseParts};
use crate::error::ProviderError;
use crate::tap::Tap;
use crate::wire::Call;

/// How many content blocks an answer may open: the model is made to call one tool.
const MAX_BLOCKS: usize = 64;

/// One ConverseStream call, its events assembled into the Converse JSON of a whole answer.
pub(crate) async fn converse_stream(
    call: &Call<'_>,
    client: &aws_sdk_bedrockruntime::Client,
    parts: ConverseParts,
    tool: &str,
) -> Result<Value, ProviderError> {
    let request = client
        .converse_stream()
        .model_id(&call.profile.model)
        .set_system(Some(parts.system))
        .set_messages(Some(parts.messages))
        .inference_config(parts.inference)
        .tool_config(parts.tools)
        .customize()
        .interceptor(BoundBody);
    let read = async {
        let output = match endpoint(call.profile) {
            Some(endpoint) => request.config_override(endpoint).send().await,
            None => request.send().await,
        }
        .map_err(sdk_error)?;
        let mut events = output.stream;
        let mut answer = Assembly::new(tool);
        while let Some(event) = events.recv().await.map_err(|e| stream_error(e, call.timeout))? {
            answer.event(call.tap, event)?;
        }
        answer.answer()
    };
    match tokio::time::timeout(call.timeout, read).await {
        Err(_) => Err(ProviderError::Timeout(call.timeout)),
        Ok(answer) => answer,
    }
}

/// The events read so far.
struct Assembly<'t> {
    /// The answer tool's name: only its input is the answer's text.
    tool: &'t str,
    /// The content blocks by their index, in the order they were opened: the answer lists them
    /// so, and its first answer tool block is the one whose input the tap is told (a model that
    /// opens the tool twice has one answer, and its live text is that answer's alone).
    blocks: Vec<(i32, Block)>,
    /// The index of the first block opened that calls the answer tool.
    answering: Option<i32>,
    stop_reason: Option<String>,
    usage: Option<(i32, i32)>,
}

enum Block {
    Text(String),
    /// A tool use: its id, its name and its input as written (JSON, read at the end).
    ToolUse {
        id: String,
        name: String,
        input: String,
    },
}

impl<'t> Assembly<'t> {
    fn new(tool: &'t str) -> Assembly<'t> {
        Assembly { tool, blocks: Vec::new(), answering: None, stop_reason: None, usage: None }
    }

    fn event(&mut self, tap: &dyn Tap, event: ConverseStreamOutput) -> Result<(), ProviderError> {
        match event {
            ConverseStreamOutput::ContentBlockStart(start) => {
                if let Some(ContentBlockStart::ToolUse(tool_use)) = start.start() {
                    let (id, name) = (tool_use.tool_use_id().to_owned(), tool_use.name().to_owned());
                    self.open(
                        start.content_block_index(),
                        Block::ToolUse { id, name, input: String::new() },
                    )?;
                }
            }
            ConverseStreamOutput::ContentBlockDelta(delta) => {
                let index = delta.content_block_index();
                match delta.delta() {
                    Some(ContentBlockDelta::Text(piece)) if !piece.is_empty() => {
                        if self.block(index).is_none() {
                            self.open(index, Block::Text(String::new()))?;
                        }
                        if let Some(Block::Text(text)) = self.block(index) {
                            text.push_str(piece);
                        }
                    }
                    Some(ContentBlockDelta::ToolUse(piece)) if !piece.input().is_empty() => {
                        let answers = self.answering == Some(index);
                        if let Some(Block::ToolUse { input, .. }) = self.block(index) {
                            if answers {
                                tap.text(piece.input());
                            }
                            input.push_str(piece.input());
                        }
                    }
                    // Reasoning, citations, and deltas a newer API may add.
                    _ => {}
                }
            }
            ConverseStreamOutput::MessageStop(stop) => {
                self.stop_reason = Some(stop.stop_reason().as_str().to_owned());
            }
            ConverseStreamOutput::Metadata(metadata) => {
                if let Some(usage) = metadata.usage() {
                    self.usage = Some((usage.input_tokens(), usage.output_tokens()));
                }
            }
            // `messageStart`, `contentBlockStop`, and events a newer API may add.
            _ => {}
        }
        Ok(())
    }

    fn block(&mut self, index: i32) -> Option<&mut Block> {
        self.blocks.iter_mut().find(|(open, _)| *open == index).map(|(_, block)| block)
    }

    fn open(&mut self, index: i32, block: Block) -> Result<(), ProviderError> {
        if self.block(index).is_some() {
            return Err(ProviderError::Malformed(format!(
                "the streamed answer opened content block {index} twice"
            )));
        }
        if self.blocks.len() >= MAX_BLOCKS {
            return Err(ProviderError::Malformed(format!(
                "the streamed answer opened more than {MAX_BLOCKS} content blocks"
            )));
        }
        if matches!(&block, Block::ToolUse { name, .. } if name == self.tool) && self.answering.is_none() {
            self.answering = Some(index);
        }
        self.blocks.push((index, block));
        Ok(())
    }

    /// The answer as Converse JSON; a stream that ended before `messageStop` is cut short.
    fn answer(self) -> Result<Value, ProviderError> {
        let Some(stop_reason) = self.stop_reason else {
            return Err(ProviderError::Malformed("the Bedrock stream ended before messageStop".into()));
        };
        let content: Vec<Value> = self
            .blocks
            .into_iter()
            .map(|(_, block)| match block {
                Block::Text(text) => json!({"text": text}),
                // The input as the model wrote it; written badly, it stays text, and the reader
                // finds no object (a repair turn, as a whole answer's would be).
                Block::ToolUse { id, name, input } => {
                    let input = match input.trim() {
                        "" => json!({}),
                        text => serde_json::from_str(text).unwrap_or(Value::String(input)),
                    };
                    json!({"toolUse": {"toolUseId": id, "name": name, "input": input}})
                }
            })
            .collect();
        let (input_tokens, output_tokens) = self.usage.unwrap_or_default();
        Ok(json!({
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": stop_reason,
            "usage": {"inputTokens": input_tokens.max(0), "outputTokens": output_tokens.max(0)},
        }))
    }
}

/// An error reading the stream: an exception event as the same exception of a Converse call
/// (by its HTTP status there), a lost connection, or a stream that is not ConverseStream's.
fn stream_error(error: SdkError<ConverseStreamOutputError, RawMessage>, timeout: Duration) -> ProviderError {
    match error {
        SdkError::ServiceError(context) => {
            let exception = context.into_err();
            let (code, status) = match &exception {
                ConverseStreamOutputError::ThrottlingException(_) => ("ThrottlingException", 429),
                ConverseStreamOutputError::ModelStreamErrorException(_) => ("ModelStreamErrorException", 424),
                ConverseStreamOutputError::InternalServerException(_) => ("InternalServerException", 500),
                ConverseStreamOutputError::ServiceUnavailableException(_) => {
                    ("ServiceUnavailableException", 503)
                }
                ConverseStreamOutputError::ValidationException(_) => ("ValidationException", 400),
                // An exception this SDK does not know: the service failed.
                other => (other.code().unwrap_or("unknown"), 500),
            };
            classify(code, Some(status), exception.message().unwrap_or_default())
        }
        SdkError::TimeoutError(_) => ProviderError::Timeout(timeout),
        SdkError::DispatchFailure(_) if too_long(&error) => ProviderError::Malformed(TooLong.to_string()),
        SdkError::DispatchFailure(_) => ProviderError::Connection(DisplayErrorContext(&error).to_string()),
        // A frame or an event that could not be read; what it held is not repeated.
        other => {
            tracing::debug!(error = %DisplayErrorContext(&other), "an unreadable Bedrock stream");
            ProviderError::Malformed("an event of the Bedrock stream could not be read".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use aws_sdk_bedrockruntime::types::{ContentBlockStartEvent, ToolUseBlockStart};

    use super::*;
    use crate::tap::NoTap;

    fn start(index: i32) -> ConverseStreamOutput {
        let tool_use = ToolUseBlockStart::builder().tool_use_id("t").name("answer").build().unwrap();
        ConverseStreamOutput::ContentBlockStart(
            ContentBlockStartEvent::builder()
                .content_block_index(index)
                .start(ContentBlockStart::ToolUse(tool_use))
                .build()
                .unwrap(),
        )
    }

    #[test]
    fn a_stream_opening_too_many_blocks_is_malformed() {
        let mut answer = Assembly::new("answer");
        let opened = (0..=MAX_BLOCKS as i32).try_for_each(|index| answer.event(&NoTap, start(index)));
        assert!(matches!(opened, Err(ProviderError::Malformed(ref m)) if m.contains("blocks")), "{opened:?}");
    }
}
