//! The lines a stub batch answers with, in each API's shape: a valid answer from the request's
//! schema (as scripted, its free text as a test asked), an error line.

use serde_json::{json, Value};

use super::{Api, LineScript};
use crate::stub_provider::answer_for_schema;

/// The line of an answered request: its answer from its schema (as scripted), in `api`'s shape.
pub(super) fn answered_line(
    n: usize,
    custom_id: &str,
    body: &Value,
    script: &Option<LineScript>,
    api: Api,
    text: &Option<String>,
) -> Result<Value, Value> {
    let says = match script {
        Some(LineScript::Says(said)) => Some(said.clone()),
        _ => None,
    };
    let text = if says.is_some() { &says } else { text };
    match api {
        Api::OpenAi => {
            let schema = &body["response_format"]["json_schema"]["schema"];
            let answer = filled(scripted_answer(script, schema), schema, text);
            let mut completion = json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion", "model": "stub-model",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": answer.to_string()}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}});
            pad(&mut completion, script);
            Ok(json!({"id": format!("batch_req_{n}"), "custom_id": custom_id,
                "response": {"status_code": 200, "request_id": format!("req_{n}"), "body": completion}, "error": null}))
        }
        Api::Anthropic => {
            let tool = &body["tools"][0];
            let answer = filled(scripted_answer(script, &tool["input_schema"]), &tool["input_schema"], text);
            let mut message = json!({"id": format!("msg_{n}"), "type": "message", "role": "assistant", "model": "stub-model",
                "content": [{"type": "tool_use", "id": format!("toolu_{n}"), "name": tool["name"], "input": answer}],
                "stop_reason": "tool_use", "usage": {"input_tokens": 11, "output_tokens": 7}});
            pad(&mut message, script);
            Ok(json!({"custom_id": custom_id, "result": {"type": "succeeded", "message": message}}))
        }
    }
}

/// `answer` with each free-text field (a string with no `enum` or `format`) saying `text`, cut
/// to the field's `maxLength` characters.
fn filled(mut answer: Value, schema: &Value, text: &Option<String>) -> Value {
    let (Some(text), Some(fields)) = (text, answer.as_object_mut()) else { return answer };
    for (name, value) in fields.iter_mut() {
        let property = &schema["properties"][name.as_str()];
        if value.is_string() && property["enum"].is_null() && property["format"].is_null() {
            let most = property["maxLength"].as_u64().map_or(usize::MAX, |n| n as usize);
            *value = json!(text.chars().take(most).collect::<String>());
        }
    }
    answer
}

pub(super) fn anthropic_error(custom_id: &str, status: u16) -> Value {
    let kind = match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    json!({"custom_id": custom_id, "result": {"type": "errored",
        "error": {"type": "error", "error": {"type": kind, "message": "stub error"}}}})
}

/// The answer of a line: valid from its schema, or `{}` when scripted invalid.
pub(crate) fn scripted_answer(script: &Option<LineScript>, schema: &Value) -> Value {
    match script {
        Some(LineScript::Invalid) => json!({}),
        Some(LineScript::InvalidWithNul) => json!({"answer": "nul \u{0} here"}),
        _ => answer_for_schema(schema),
    }
}

/// An oversized line's padding, outside the answer.
pub(crate) fn pad(body: &mut Value, script: &Option<LineScript>) {
    if let Some(LineScript::Oversized(bytes)) = script {
        body["padding"] = json!("x".repeat(*bytes + 1));
    }
}
