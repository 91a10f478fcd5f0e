//! The client against a small local HTTP stub that answers as scripted: which answers are tried
//! again (429 with `Retry-After`, 5xx), which never are (other 4xx), how batches are chunked, and
//! how answers are read. The end-to-end tests against the dev server are the CLI's
//! (tools/cli/tests/cli).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod acting;
mod answers;
mod create_many;
mod output;
mod redirects;
mod retries;
mod stub;
