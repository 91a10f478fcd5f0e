//! `GET /v1/tasks?runId=…|scopeId=…&status=…&kind=…&modelId=…&createdAfter=…&createdBefore=…&after=…&limit=…`:
//! the query of a task listing, parsed strictly. Pages are keyset pages on the task id (UUIDv7,
//! so creation order).

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::codes::TaskStatus;
use crate::history::{instant, scope_param};
use crate::limits::{MODEL_ID_MAX_CHARS, TASK_PAGE_MAX};
use crate::problems::{Path, Problems};
use crate::request::Kind;

/// Whose tasks to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskFilter {
    Run(Uuid),
    Scope(String),
}

/// A parsed listing query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListTasks {
    pub filter: TaskFilter,
    pub status: Option<TaskStatus>,
    pub kind: Option<Kind>,
    pub model_id: Option<String>,
    /// Tasks created at or after this instant.
    pub created_after: Option<DateTime<Utc>>,
    /// Tasks created before this instant.
    pub created_before: Option<DateTime<Utc>>,
    /// The `next` of the previous page: tasks after this id.
    pub after: Option<Uuid>,
    pub limit: usize,
}

/// The raw query parameters of a listing.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListQuery<'a> {
    pub run_id: Option<&'a str>,
    pub scope_id: Option<&'a str>,
    pub status: Option<&'a str>,
    pub kind: Option<&'a str>,
    pub model_id: Option<&'a str>,
    pub created_after: Option<&'a str>,
    pub created_before: Option<&'a str>,
    pub after: Option<&'a str>,
    pub limit: Option<&'a str>,
}

impl ListTasks {
    pub fn parse(query: ListQuery<'_>) -> Result<ListTasks, Problems> {
        let root = Path::root();
        let mut problems = Problems::new();
        let filter = match (query.run_id, query.scope_id) {
            (Some(_), Some(_)) => {
                problems.add(&root, "must have exactly one of runId and scopeId, not both");
                None
            }
            (None, None) => {
                problems.add(&root, "must have one of effectKey, runId and scopeId");
                None
            }
            (Some(run_id), None) => match Uuid::parse_str(run_id) {
                Ok(id) => Some(TaskFilter::Run(id)),
                Err(_) => {
                    problems.add(&root.key("runId"), "must be a UUID");
                    None
                }
            },
            (None, Some(scope_id)) => scope_param(&mut problems, Some(scope_id)).map(TaskFilter::Scope),
        };
        let status = query.status.and_then(|text| {
            let status = TaskStatus::parse(text);
            if status.is_none() {
                problems
                    .add(&root.key("status"), "must be one of queued, running, succeeded, failed, canceled");
            }
            status
        });
        let kind = query.kind.and_then(|text| {
            let kind = Kind::parse(text);
            if kind.is_none() {
                problems.add(
                    &root.key("kind"),
                    "must be one of generate_text, classify, classify_many, extract_data",
                );
            }
            kind
        });
        let model_id = query.model_id.and_then(|text| {
            let length = text.chars().count();
            if length == 0 || length > MODEL_ID_MAX_CHARS || text.contains('\0') {
                problems.add(
                    &root.key("modelId"),
                    format!("must be 1 to {MODEL_ID_MAX_CHARS} characters without NUL"),
                );
                None
            } else {
                Some(text.to_owned())
            }
        });
        let created_after = instant(&mut problems, "createdAfter", query.created_after);
        let created_before = instant(&mut problems, "createdBefore", query.created_before);
        let after = query.after.and_then(|text| {
            let after = Uuid::parse_str(text).ok();
            if after.is_none() {
                problems.add(&root.key("after"), "must be a task id (the page's next)");
            }
            after
        });
        let limit = match query.limit {
            None => Some(TASK_PAGE_MAX),
            Some(text) => match text.parse::<usize>() {
                Ok(limit) if (1..=TASK_PAGE_MAX).contains(&limit) => Some(limit),
                _ => {
                    problems.add(&root.key("limit"), format!("must be an integer from 1 to {TASK_PAGE_MAX}"));
                    None
                }
            },
        };
        match (filter, limit) {
            (Some(filter), Some(limit)) if problems.is_empty() => {
                Ok(ListTasks { filter, status, kind, model_id, created_after, created_before, after, limit })
            }
            _ => Err(problems),
        }
    }
}

impl ListTasks {
    /// The first page of `filter`'s tasks at the largest page, unfiltered, as `GET /v1/tasks`
    /// asks for it without parameters; set the filters on it.
    pub fn first_page(filter: TaskFilter) -> ListTasks {
        ListTasks {
            filter,
            status: None,
            kind: None,
            model_id: None,
            created_after: None,
            created_before: None,
            after: None,
            limit: TASK_PAGE_MAX,
        }
    }

    /// Does the listing filter the owner's tasks (status, kind, model, time)? Such a listing
    /// looks at most at [`crate::limits::TASK_SCAN_MAX`] tasks an answer, so that a filter that
    /// matches few of a large run's or scope's tasks (`status=failed` among 500,000 succeeded
    /// ones) answers short pages instead of reading them all.
    pub fn narrowed(&self) -> bool {
        self.status.is_some()
            || self.kind.is_some()
            || self.model_id.is_some()
            || self.created_after.is_some()
            || self.created_before.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(query: ListQuery<'_>) -> Result<ListTasks, Vec<String>> {
        ListTasks::parse(query).map_err(|p| p.paths().into_iter().map(str::to_owned).collect())
    }

    #[test]
    fn one_owner_a_known_status_a_task_id_and_a_bounded_limit() {
        let run = Uuid::now_v7().to_string();
        let listed = parse(ListQuery {
            run_id: Some(&run),
            status: Some("queued"),
            limit: Some("5"),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(listed.filter, TaskFilter::Run(run.parse().unwrap()));
        assert_eq!((listed.status, listed.limit), (Some(TaskStatus::Queued), 5));
        let scoped = parse(ListQuery { scope_id: Some("s"), ..Default::default() }).unwrap();
        assert_eq!(
            (scoped.filter, scoped.limit, scoped.after),
            (TaskFilter::Scope("s".into()), TASK_PAGE_MAX, None)
        );

        assert!(parse(ListQuery::default()).is_err(), "an owner is required");
        assert!(parse(ListQuery { run_id: Some(&run), scope_id: Some("s"), ..Default::default() }).is_err());
        assert_eq!(parse(ListQuery { run_id: Some("x"), ..Default::default() }).unwrap_err(), ["runId"]);
        assert_eq!(parse(ListQuery { scope_id: Some(""), ..Default::default() }).unwrap_err(), ["scopeId"]);
        assert_eq!(
            parse(ListQuery { scope_id: Some("a\0"), ..Default::default() }).unwrap_err(),
            ["scopeId"]
        );
        let bad = ListQuery {
            scope_id: Some("s"),
            status: Some("done"),
            after: Some("1"),
            limit: Some("0"),
            ..Default::default()
        };
        assert_eq!(parse(bad).unwrap_err(), ["status", "after", "limit"]);
        assert!(parse(ListQuery { scope_id: Some("s"), limit: Some("101"), ..Default::default() }).is_err());
    }

    #[test]
    fn status_kind_model_and_time_filters_are_checked_and_narrow_the_listing() {
        let plain = parse(ListQuery { scope_id: Some("s"), ..Default::default() }).unwrap();
        assert!(!plain.narrowed());
        let by_status =
            parse(ListQuery { scope_id: Some("s"), status: Some("failed"), ..Default::default() }).unwrap();
        assert!(by_status.narrowed(), "a status filter walks a bounded number of tasks too");
        let narrowed = parse(ListQuery {
            scope_id: Some("s"),
            kind: Some("classify"),
            model_id: Some("default"),
            created_after: Some("2026-01-31T12:00:00+01:00"),
            created_before: Some("2026-02-01T00:00:00Z"),
            ..Default::default()
        })
        .unwrap();
        assert!(narrowed.narrowed());
        assert_eq!((narrowed.kind, narrowed.model_id.as_deref()), (Some(Kind::Classify), Some("default")));
        assert_eq!(narrowed.created_after.unwrap().to_rfc3339(), "2026-01-31T11:00:00+00:00");
        let only_time = parse(ListQuery {
            scope_id: Some("s"),
            created_before: Some("2026-02-01T00:00:00Z"),
            ..Default::default()
        });
        assert!(only_time.unwrap().narrowed());
        let bad = ListQuery {
            scope_id: Some("s"),
            kind: Some("summarize"),
            model_id: Some(""),
            created_after: Some("yesterday"),
            created_before: Some("2026-02-01"),
            ..Default::default()
        };
        assert_eq!(parse(bad).unwrap_err(), ["kind", "modelId", "createdAfter", "createdBefore"]);
        let long_model = "m".repeat(MODEL_ID_MAX_CHARS + 1);
        assert_eq!(
            parse(ListQuery { scope_id: Some("s"), model_id: Some(&long_model), ..Default::default() })
                .unwrap_err(),
            ["modelId"]
        );
    }
}
