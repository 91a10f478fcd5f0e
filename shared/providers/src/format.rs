//! Which wire format a profile speaks, and the parts of it that need no call (the first
//! messages, a request's body, the reading of an answer, a repair turn's messages): what the
//! on-demand client and a batch's lines share. Each format is its own module; this one picks.

use aitasks_contracts::AiRequest;
use serde_json::Value;

use crate::anthropic::Anthropic;
use crate::bedrock::Bedrock;
use crate::error::ProviderError;
use crate::openai::OpenAi;
use crate::profiles::ModelProfile;
use crate::wire::{Turn, Wire};

/// The wire format a profile speaks, for the parts that need no call (a batch's lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    OpenAi,
    Anthropic,
    Bedrock,
}

impl Format {
    pub(crate) fn of(profile: &ModelProfile) -> Format {
        match profile.provider.as_str() {
            "anthropic" => Format::Anthropic,
            "bedrock" => Format::Bedrock,
            _ => Format::OpenAi,
        }
    }

    pub(crate) fn start(self, request: &AiRequest) -> Vec<Value> {
        match self {
            Format::OpenAi => OpenAi.start(request),
            Format::Anthropic => Anthropic.start(request),
            Format::Bedrock => Bedrock.start(request),
        }
    }

    pub(crate) fn body(
        self,
        profile: &ModelProfile,
        request: &AiRequest,
        schema: &Value,
        conversation: &[Value],
    ) -> Value {
        match self {
            Format::OpenAi => OpenAi.body(profile, request, schema, conversation),
            Format::Anthropic => Anthropic.body(profile, request, schema, conversation),
            Format::Bedrock => Bedrock.body(profile, request, schema, conversation),
        }
    }

    pub(crate) fn read(
        self,
        profile: &ModelProfile,
        request: &AiRequest,
        answer: &Value,
    ) -> Result<Turn, ProviderError> {
        match self {
            Format::OpenAi => OpenAi.read(profile, request, answer),
            Format::Anthropic => Anthropic.read(profile, request, answer),
            Format::Bedrock => Bedrock.read(profile, request, answer),
        }
    }

    pub(crate) fn repair(self, conversation: &mut Vec<Value>, turn: Turn, problems: &str) {
        match self {
            Format::OpenAi => OpenAi.repair(conversation, turn, problems),
            Format::Anthropic => Anthropic.repair(conversation, turn, problems),
            Format::Bedrock => Bedrock.repair(conversation, turn, problems),
        }
    }
}
