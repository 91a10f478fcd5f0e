//! What every batch format shares with the on-demand call: a line's body is the on-demand
//! request's, and a result's answer is read and checked as an on-demand answer is, its usage
//! priced at the profile's batch prices ([`judge`]). Also the outcome of a line nobody answered
//! and the check on a provider's id before it goes into a URL.

use aitasks_contracts::{answer_schema_for, AiRequest};
use serde_json::Value;

use super::line::LineOutcome;
use crate::client::{checked, reported_usage_bounded, storable, Completion, Resume, Usage};
use crate::error::ProviderError;
use crate::format::Format;
use crate::profiles::ModelProfile;

/// The body of one batch line: the on-demand call's, for its first turn.
pub(super) fn line_body(profile: &ModelProfile, request: &AiRequest) -> Value {
    let format = Format::of(profile);
    let schema = answer_schema_for(request, profile.schema_dialect());
    format.body(profile, request, &schema, &format.start(request))
}

/// A result line's answer (the body an on-demand call would have had) read and checked.
pub(super) fn judge(profile: &ModelProfile, request: &AiRequest, answer: &Value) -> LineOutcome {
    let format = Format::of(profile);
    let turn = match format.read(profile, request, answer) {
        Ok(turn) => reported_usage_bounded(turn),
        Err(error) => return LineOutcome::Failed(error),
    };
    let mut usage = Usage::start(profile);
    usage.calls = 1;
    usage.add_turn(&turn);
    usage.estimated_cost_usd = profile.batch_cost(turn.input_tokens, turn.output_tokens);
    match checked(request, &turn) {
        Ok(output) => match storable(output) {
            Ok(output) => LineOutcome::Answered(Completion { output, usage }),
            Err(too_large) => LineOutcome::Failed(too_large),
        },
        Err(problems) => {
            let mut conversation = format.start(request);
            format.repair(&mut conversation, turn, &problems);
            LineOutcome::Invalid(Resume { conversation, problems, usage })
        }
    }
}

/// An expired or canceled line: answered by nobody.
pub(super) fn unanswered(why: &str) -> LineOutcome {
    LineOutcome::Unanswered(format!("the batch ended before this task was answered ({why})"))
}

/// A provider's id used in a URL path: a short token only (no `/`, no `..`).
pub(super) fn path_id<'a>(id: &'a str, what: &str) -> Result<&'a str, ProviderError> {
    if crate::error::is_token(id) {
        Ok(id)
    } else {
        Err(ProviderError::Malformed(format!(
            "the provider's {what} id is not a short token: {}",
            crate::error::said(None, "id", id)
        )))
    }
}
