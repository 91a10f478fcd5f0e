-- Batch hygiene (docs/lifecycle.md, "Deferred tasks"): no blind resubmits, and nothing of a
-- tenant's left at the provider once its batch is done with.
--
-- `submits` counts the submits sent for a batch row (each counted before it is sent), and
-- `submit_sent_at` is when the first went out: a submit whose answer was lost may have made a
-- batch there all the same, so before sending again the batcher looks for it (Anthropic, which
-- has no idempotency key: batches made since `submit_sent_at` with as many requests; at most
-- `submits` of them can be this row's). `extra_batch_ids` are the provider's batches made for
-- this row beyond the one adopted (canceled there, deleted with it).
--
-- `cleanup_due_at`: when the provider's copies of an ended batch (OpenAI's input, output and
-- error files; Anthropic's message batch and its extras) are to be deleted next; NULL once done
-- (or given up after `cleanup_tries`). An ended batch is pruned only after that.
ALTER TABLE task_batches
    ADD COLUMN submits integer NOT NULL DEFAULT 0 CHECK (submits >= 0),
    ADD COLUMN submit_sent_at timestamptz,
    ADD COLUMN extra_batch_ids text[] NOT NULL DEFAULT '{}'
        CHECK (cardinality(extra_batch_ids) <= 16),
    ADD COLUMN cleanup_due_at timestamptz DEFAULT now(),
    ADD COLUMN cleanup_tries integer NOT NULL DEFAULT 0 CHECK (cleanup_tries >= 0);

-- The clean-up's pages: ended batches with provider copies left, by when they are due.
CREATE INDEX task_batches_cleanup_idx ON task_batches (cleanup_due_at)
    WHERE state = 'ended' AND cleanup_due_at IS NOT NULL;
-- Whether a provider's batch is already one of ours (a lookup passes those by), in any state.
CREATE INDEX task_batches_provider_any_idx ON task_batches (provider_batch_id);
