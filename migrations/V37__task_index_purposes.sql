-- What each index on `tasks` is for: the statements (shared/store/sql/…) that need it, so that
-- none is kept without a reader and none dropped while one needs it. `\d+ tasks` shows these;
-- docs/growth/PLANS.md has their plans at growth.
COMMENT ON INDEX tasks_pkey IS
    'Point reads and writes by id: read/get_task, lease/claim_by, the batch settles (settle/complete_many), and every page that joins back to tasks by id.';
COMMENT ON INDEX tasks_effect_key_unique IS
    'Idempotent create on (app_id, effect_key): create/insert_*, admission/admit, create/existing_by_key, owned/release by effect key.';
COMMENT ON INDEX tasks_in_flight_idx IS
    'Queued and running tasks by id: the fences of a running attempt (lease/heartbeat, lease/check, settle/*), cancel/request_cancel, sweep/expire_running, stats/backlog.';
COMMENT ON INDEX tasks_run_in_flight_idx IS
    'A run''s tasks still in flight: cancel/cancel_run_tasks, cancel/finish_run_cancel (a run of many ended tasks is not walked).';
COMMENT ON INDEX tasks_run_list_idx IS
    'A run''s tasks in id order: listing/list_tasks_of_run, listing/list_tasks_narrowed_of_run, operations/walk_operation_of_run, history/list_runs.';
COMMENT ON INDEX tasks_app_created_idx IS
    'A tenant''s tasks in creation order: listing of a tenant, summary/summary, operations/walk_operation_of_tenant.';
COMMENT ON INDEX tasks_scope_list_idx IS
    'A scope''s tasks in id order: listing/list_tasks_of_scope, listing/list_tasks_narrowed_of_scope, owned/delete_owned_page of a scope.';
COMMENT ON INDEX tasks_scope_active_idx IS
    'A scope''s scoped tasks in flight, counted by admission/read_state (index only) and fragments/lower_active.';
COMMENT ON INDEX tasks_cache_idx IS
    'The result cache: admission/read_state finds the newest success of (app_id, scope_id, cache_key).';
COMMENT ON INDEX tasks_app_source_idx IS
    'A source''s tasks owned by the application, released or not: owned/delete_owned_page (deletion of a source''s or a scope''s data).';
COMMENT ON INDEX tasks_unreleased_idx IS
    'Unreleased sources of a scope: owned/unreleased_sources (index only; released tasks are not walked).';
COMMENT ON INDEX tasks_unreleased_step_idx IS
    'Unreleased sources of one step: owned/unreleased_sources_of_step (index only).';
COMMENT ON INDEX tasks_retention_idx IS
    'Released results past retention: owned/delete_retained.';
COMMENT ON INDEX tasks_unsent_at_idx IS
    'Queued tasks by their message''s send (NULL: owed): sweep/take_unsent, sweep/take_lost, sweep/owed_beyond, stats/backlog (queued count).';
COMMENT ON INDEX tasks_queued_deadline_idx IS
    'The queue''s deadlines (plain: created_at under deferred_by NULL; deferred: deferred_by): sweep/expire_queued, batch_form/send_due_now, batch_form/nearest_window, stats/backlog (oldest queued).';
COMMENT ON INDEX tasks_awaiting_batch_idx IS
    'Deferred tasks awaiting a provider batch, by profile: batch_form/form_batch_open, batch_form/form_batch_send_now, batch_form/batch_waiting.';
COMMENT ON INDEX tasks_in_batch_idx IS
    'A provider batch''s running tasks: batches/* settles, settle/give_back and requeue of a batch attempt, sweep/expire_running of a batch.';
