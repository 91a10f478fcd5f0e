//! What a read costs of its tenant's read rate (docs/api.md, "Read rate"), in units: about the
//! database work of its answer at its bound, so that a tenant's dashboards are held to a share of
//! the database whatever mix of reads they send.

/// The five sizes of read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadCost {
    /// A few rows found by key: a task (`GET /v1/tasks/{taskId}`, a long poll included: its later
    /// looks are one primary-key read a second at most), a task by effect key, a run, a task's
    /// attempts, events, callbacks or provider batch, a task's replays (up to 101 rows of
    /// `task_replays` by its key, each joined to its task), an operation, a hold.
    ByKey,
    /// A page of a run's or a scope's tasks (up to 100 rows, or a walk of 1,000 index entries and
    /// their rows), a page of unreleased sources, a page of operations (up to 100 rows by the
    /// tenant's key), or a page of holds.
    Page,
    /// A run's progress: up to 10,000 of its tasks counted by status
    /// ([`RUN_PROGRESS_COUNTED_MAX`](crate::RUN_PROGRESS_COUNTED_MAX)).
    Count,
    /// The activity (`GET /v1/activity`): up to 20,000 of the tenant's minute or hour rows
    /// ([`ACTIVITY_ROWS_MAX`](crate::ACTIVITY_ROWS_MAX)), each a few hundred bytes.
    Series,
    /// A page of runs (up to 1,000 runs walked and 100 × 1,001 tasks counted) or the summary (up to
    /// 100,000 tasks).
    Wide,
}

impl ReadCost {
    /// Its units.
    pub const fn units(self) -> u32 {
        match self {
            ReadCost::ByKey => 1,
            ReadCost::Page => 20,
            ReadCost::Count => 100,
            ReadCost::Series => 200,
            ReadCost::Wide => 1_000,
        }
    }

    /// The most any read costs: a tenant's burst holds at least this.
    pub const MAX_UNITS: u32 = ReadCost::Wide.units();
}
