//! Batches of any size: `POST /v1/tasks/batch` in chunks of at most 1,000 items and 6,000,000
//! bytes, each item answered in order as its own create would be.

use std::ops::Range;
use std::time::Duration;

use aitasks_contracts::{Path, Problems, BULK_MAX_TASKS, MAX_BULK_BODY_BYTES};
use reqwest::Method;
use serde::{Deserialize, Serialize};

use crate::answers::TaskSummary;
use crate::body::TaskBody;
use crate::client::{Call, Client, ErrorBody};
use crate::error::{ApiError, Error};

/// `{"tasks":[` and `]}` around the items, and a comma between two.
const ENVELOPE_BYTES: usize = r#"{"tasks":[]}"#.len();

/// How one item of a batch was answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum ItemResult {
    /// 201: a new task.
    Created(TaskSummary),
    /// 200: its effect key's task, as it is.
    Existing(TaskSummary),
    /// Refused (400, 404, 409, 413, 429): nothing was stored for it.
    Refused(ApiError),
}

impl ItemResult {
    pub fn task(&self) -> Option<&TaskSummary> {
        match self {
            ItemResult::Created(task) | ItemResult::Existing(task) => Some(task),
            ItemResult::Refused(_) => None,
        }
    }
}

/// Counts of a batch's items so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateManyCounts {
    pub created: usize,
    pub existing: usize,
    pub refused: usize,
}

impl CreateManyCounts {
    fn add(&mut self, result: &ItemResult) {
        match result {
            ItemResult::Created(_) => self.created += 1,
            ItemResult::Existing(_) => self.existing += 1,
            ItemResult::Refused(_) => self.refused += 1,
        }
    }

    /// Items answered.
    pub fn answered(&self) -> usize {
        self.created + self.existing + self.refused
    }
}

/// Every item's answer, in the order the items were given.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CreateManyReport {
    pub results: Vec<ItemResult>,
    pub counts: CreateManyCounts,
}

impl CreateManyReport {
    /// The refused items: their index in the batch and the API's error.
    pub fn refused(&self) -> impl Iterator<Item = (usize, &ApiError)> {
        self.results.iter().enumerate().filter_map(|(index, result)| match result {
            ItemResult::Refused(error) => Some((index, error)),
            _ => None,
        })
    }
}

#[derive(Deserialize)]
struct RawResults {
    results: Vec<RawItem>,
}

#[derive(Deserialize)]
struct RawItem {
    status: u16,
    #[serde(default)]
    task: Option<TaskSummary>,
    #[serde(default)]
    error: Option<ErrorBody>,
}

/// Split items (their JSON texts) into chunks the API takes: at most [`BULK_MAX_TASKS`] items
/// and [`MAX_BULK_BODY_BYTES`] bytes of body each. An item too large for any chunk is refused
/// here, before anything is sent.
pub fn plan_chunks(texts: &[String]) -> Result<Vec<Range<usize>>, Problems> {
    let mut problems = Problems::new();
    let mut chunks = Vec::new();
    let (mut start, mut bytes) = (0, ENVELOPE_BYTES);
    for (index, text) in texts.iter().enumerate() {
        if ENVELOPE_BYTES + text.len() > MAX_BULK_BODY_BYTES {
            problems.add(
                &Path::root().key("tasks").index(index),
                format!("is {} bytes: a batch body is at most {MAX_BULK_BODY_BYTES}", text.len()),
            );
            continue;
        }
        let separator = usize::from(index > start);
        if index - start == BULK_MAX_TASKS || bytes + separator + text.len() > MAX_BULK_BODY_BYTES {
            chunks.push(start..index);
            (start, bytes) = (index, ENVELOPE_BYTES);
        }
        bytes += usize::from(index > start) + text.len();
    }
    if start < texts.len() {
        chunks.push(start..texts.len());
    }
    problems.into_result(chunks)
}

impl Client {
    /// Create any number of tasks (see [`Client::create_many_with`]).
    pub async fn create_many(&self, bodies: &[TaskBody]) -> Result<CreateManyReport, Error> {
        self.create_many_with(bodies, |_| {}).await
    }

    /// Create any number of tasks, in chunks the API takes, calling `progress` with the counts
    /// after each chunk. Items refused with 429 and a `retryAfter` the retry policy waits for
    /// are sent again (in the policy's tries); every other refusal is the item's answer. A
    /// whole chunk that fails (401, the database down past the retries) ends the call with its
    /// error: the chunks before it stand, and sending the same bodies again is safe (each item
    /// is idempotent on its effect key).
    pub async fn create_many_with(
        &self,
        bodies: &[TaskBody],
        mut progress: impl FnMut(&CreateManyCounts),
    ) -> Result<CreateManyReport, Error> {
        let texts: Vec<String> = bodies.iter().map(TaskBody::to_json).collect();
        let chunks = plan_chunks(&texts).map_err(Error::InvalidBody)?;
        let mut results: Vec<Option<ItemResult>> = vec![None; texts.len()];
        let mut counts = CreateManyCounts::default();
        for chunk in chunks {
            let mut pending: Vec<usize> = chunk.clone().collect();
            let mut tries = 1;
            loop {
                let answers = self.send_chunk(&texts, &pending).await?;
                let mut again = Vec::new();
                let mut pause = Duration::ZERO;
                for (&index, answer) in pending.iter().zip(answers) {
                    if let ItemResult::Refused(error) = &answer {
                        let retry_after = error.retry_after.map(Duration::from_secs);
                        let delay = (error.status == 429
                            && retry_after.is_some()
                            && tries < self.retry_policy().max_tries)
                            .then(|| self.retry_policy().delay(tries, retry_after))
                            .flatten();
                        if let Some(delay) = delay {
                            again.push(index);
                            pause = pause.max(delay);
                        }
                    }
                    results[index] = Some(answer);
                }
                if again.is_empty() {
                    break;
                }
                tokio::time::sleep(pause).await;
                pending = again;
                tries += 1;
            }
            for result in results[chunk].iter().flatten() {
                counts.add(result);
            }
            progress(&counts);
        }
        let results: Vec<ItemResult> = results.into_iter().flatten().collect();
        Ok(CreateManyReport { results, counts })
    }

    /// One `POST /v1/tasks/batch` of these items: their answers, in order.
    async fn send_chunk(&self, texts: &[String], items: &[usize]) -> Result<Vec<ItemResult>, Error> {
        let mut body = String::from(r#"{"tasks":["#);
        for (n, &index) in items.iter().enumerate() {
            if n > 0 {
                body.push(',');
            }
            body.push_str(&texts[index]);
        }
        body.push_str("]}");
        let mut call = Call::new(Method::POST, "/v1/tasks/batch".into());
        call.body = Some(body.into_bytes());
        let reply = self.send(&call).await?;
        let raw: RawResults = reply.decode()?;
        let unexpected = |reason: &str| Error::UnexpectedAnswer {
            status: reply.status,
            reason: reason.to_owned(),
            request_id: reply.request_id.clone(),
        };
        if raw.results.len() != items.len() {
            return Err(unexpected("a batch answers one result per item"));
        }
        raw.results
            .into_iter()
            .map(|item| match (item.status, item.task, item.error) {
                (201, Some(task), _) => Ok(ItemResult::Created(task)),
                (200, Some(task), _) => Ok(ItemResult::Existing(task)),
                (status, _, Some(error)) if status >= 400 => {
                    Ok(ItemResult::Refused(error.into_api_error(status, None, reply.request_id.clone())))
                }
                _ => Err(unexpected("an item answers a task (200, 201) or an error")),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_hold_at_most_a_thousand_items_and_the_body_limit() {
        let small: Vec<String> = (0..2_500).map(|i| format!("{{\"i\":{i}}}")).collect();
        let chunks = plan_chunks(&small).unwrap();
        assert_eq!(chunks, [0..1_000, 1_000..2_000, 2_000..2_500]);
        let big = "x".repeat(2_000_000);
        let large: Vec<String> = (0..5).map(|_| big.clone()).collect();
        let chunks = plan_chunks(&large).unwrap();
        assert_eq!(chunks, [0..2, 2..4, 4..5], "three 2 MB items pass 6,000,000 bytes");
        for chunk in chunks {
            let bytes: usize =
                ENVELOPE_BYTES + large[chunk.clone()].iter().map(|t| t.len() + 1).sum::<usize>() - 1;
            assert!(bytes <= MAX_BULK_BODY_BYTES);
        }
        let too_big = vec!["{}".to_owned(), "y".repeat(MAX_BULK_BODY_BYTES)];
        assert_eq!(plan_chunks(&too_big).unwrap_err().paths(), ["tasks[1]"]);
        assert!(plan_chunks(&[]).unwrap().is_empty());
    }
}
