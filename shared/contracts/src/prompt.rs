//! What the model is told: a system prompt, the input as the user message, and an output
//! token cap per kind.

use crate::request::AiRequest;

/// The system prompt: the caller's prompt plus the kind's rules.
pub fn system_prompt(request: &AiRequest) -> String {
    let rule = match request {
        AiRequest::GenerateText(r) => format!(
            "Answer with a JSON object whose \"text\" holds the result, at most {} characters.",
            r.max_output_chars
        ),
        AiRequest::Classify(_) => "Return exactly one of the declared choices.".to_owned(),
        AiRequest::ClassifyMany(r) => format!(
            "Return between {} and {} unique values from the declared choices.",
            r.min_choices, r.max_choices
        ),
        AiRequest::ExtractData(_) => {
            "Return only the declared fields. Do not invent values that are not supported by the input; \
             use null for an optional field the input does not support."
                .to_owned()
        }
    };
    format!("{}\n{rule}", request.prompt())
}

/// The user message: the input as JSON.
pub fn user_message(request: &AiRequest) -> String {
    match request.input() {
        Some(input) => input.to_string(),
        None => "Create the requested text.".to_owned(),
    }
}

/// The output token cap sent with the call.
pub fn max_output_tokens(request: &AiRequest) -> u32 {
    match request {
        // Room for the JSON around the text, whatever the tokenizer.
        AiRequest::GenerateText(r) => (r.max_output_chars.div_ceil(2) + 64).clamp(64, 8_192),
        AiRequest::Classify(_) => 200,
        AiRequest::ClassifyMany(_) => 500,
        AiRequest::ExtractData(_) => 4_096,
    }
}
