//! `POST /v1/tasks/batch`'s answer: one result per item, in order, kept within
//! [`ANSWER_MAX_BYTES`] as Lambda's response carries it (the body escaped into a JSON string).
//! A thousand finished `generate_text` tasks sent again would be far more, so each item takes
//! the richest of its forms that leaves room for the leanest form of every item after it:
//!
//! - a task: whole; then without its `output`; then without its `stepKey` and `effectKey` too
//!   (the item's place says which they were). `omitted` names what was left out.
//! - an invalid item: its problems listed while the batch's [`BULK_PROBLEMS_MAX`] last (and
//!   the answer has room), then none; `moreProblems` counts the ones not listed.
//! - any other refusal: as it is (a code and a short message).

use aitasks_contracts::{escaped_json_bytes, ANSWER_MAX_BYTES, BULK_PROBLEMS_MAX};
use aitasks_runtime::answers::TaskSummary;
use aitasks_runtime::ApiError;
use aitasks_store::Created;
use aws_lambda_events::apigw::ApiGatewayV2httpResponse;
use serde::Serialize;
use serde_json::{json, Value};

use crate::http_api::{error_body_listing, json_response, retry_after_seconds};

/// `{"results":[` and `]}`, escaped.
const FRAME_BYTES: usize = 20;

#[derive(Serialize)]
struct Results<'a> {
    results: Vec<Item<'a>>,
}

/// One item's result: its own status, and the task or the error it would have had alone.
#[derive(Serialize)]
#[serde(untagged)]
enum Item<'a> {
    Task {
        status: u16,
        task: TaskSummary<'a>,
    },
    Refused {
        status: u16,
        error: Value,
        #[serde(skip)]
        listed: usize,
    },
}

/// The answer to a batch, within Lambda's response limit.
pub fn many_response(answers: &[Result<Created, ApiError>]) -> ApiGatewayV2httpResponse {
    json_response(200, &Results { results: within(answers, ANSWER_MAX_BYTES) })
}

/// Each answer in the richest form that leaves room, within `budget` bytes, for the leanest
/// form of every item after it.
fn within(answers: &[Result<Created, ApiError>], budget: usize) -> Vec<Item<'_>> {
    let leanest: Vec<usize> = answers.iter().map(|answer| forms(answer, 0).last().map_or(0, bytes)).collect();
    let mut reserve: usize = leanest.iter().sum();
    let (mut used, mut problems_left) = (FRAME_BYTES, BULK_PROBLEMS_MAX);
    let mut results = Vec::with_capacity(answers.len());
    for (answer, lean) in answers.iter().zip(leanest) {
        reserve -= lean;
        let mut chosen = None;
        for form in forms(answer, problems_left) {
            let size = bytes(&form);
            chosen = Some((size, form));
            if used + size + reserve <= budget {
                break;
            }
        }
        // Every answer has at least one form; the last one tried is the leanest.
        let Some((size, item)) = chosen else { continue };
        used += size;
        if let Item::Refused { listed, .. } = &item {
            problems_left = problems_left.saturating_sub(*listed);
        }
        results.push(item);
    }
    results
}

/// The forms an answer can take, richest first, listing at most `problems` problems.
fn forms(answer: &Result<Created, ApiError>, problems: usize) -> Vec<Item<'_>> {
    match answer {
        Ok(created) => {
            let status = if created.is_new() { 201 } else { 200 };
            let whole = TaskSummary::from(created.task());
            let without_output = whole.clone().without_output();
            let lean = without_output.clone().without_keys();
            vec![
                Item::Task { status, task: whole },
                Item::Task { status, task: without_output },
                Item::Task { status, task: lean },
            ]
        }
        Err(error @ ApiError::Invalid(_)) if problems > 0 => {
            vec![refused(error, problems), refused(error, 0)]
        }
        Err(error) => vec![refused(error, problems)],
    }
}

fn refused(error: &ApiError, problems: usize) -> Item<'_> {
    let mut body = error_body_listing(error, problems);
    if let Some(seconds) = retry_after_seconds(error) {
        body["retryAfter"] = json!(seconds);
    }
    let listed = body["details"].as_array().map_or(0, Vec::len);
    Item::Refused { status: error.status(), error: body, listed }
}

/// An item's bytes in the body, with the comma before it.
fn bytes(item: &Item<'_>) -> usize {
    escaped_json_bytes(item) + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use aitasks_contracts::{Path, Problems};

    fn invalid(problems: usize) -> Result<Created, ApiError> {
        let mut found = Problems::new();
        for i in 0..problems {
            found.add(&Path::root().key(&format!("field{i}")), "is not a known field");
        }
        Err(ApiError::Invalid(found))
    }

    #[test]
    fn problems_are_listed_while_the_batch_allows_then_counted() {
        let answers: Vec<_> = (0..30).map(|_| invalid(30)).collect();
        let results = within(&answers, ANSWER_MAX_BYTES);
        let listed: Vec<usize> = results
            .iter()
            .map(|item| match item {
                Item::Refused { listed, error, .. } => {
                    let more = error["moreProblems"].as_u64().unwrap_or(0) as usize;
                    assert_eq!(listed + more, 30, "{error}");
                    *listed
                }
                Item::Task { .. } => panic!("a refusal"),
            })
            .collect();
        assert_eq!(listed.iter().sum::<usize>(), BULK_PROBLEMS_MAX);
        assert_eq!((&listed[..16], listed[16]), (&[30; 16][..], 20), "in item order");
        assert!(listed[17..].iter().all(|&n| n == 0));
    }

    #[test]
    fn a_tight_budget_lists_nothing_but_still_answers_every_item() {
        let answers: Vec<_> = (0..10).map(|_| invalid(40)).collect();
        let lean: usize = answers.iter().map(|a| bytes(&forms(a, 0)[0])).sum();
        let results = within(&answers, FRAME_BYTES + lean);
        assert_eq!(results.len(), 10);
        assert!(results.iter().all(|item| matches!(item, Item::Refused { listed: 0, .. })));
    }
}
