//! Each provider's wire format against a local server speaking it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anthropic_client;
mod batch_anthropic;
mod batch_bedrock;
mod batch_openai;
mod batch_support;
mod bedrock_client;
mod bedrock_stream;
mod credentials;
mod openai_client;
mod redirects;
mod streaming;
