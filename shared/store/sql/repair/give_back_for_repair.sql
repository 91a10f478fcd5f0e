-- A batch's answer that failed the checks gets its repair turn on-demand: the task goes back to
-- the queue with the batch's attempt uncounted (the on-demand attempt that repairs it counts it
-- again), and what that turn continues from is kept for it (take_repair.sql). Fenced on the
-- lease, as any settlement; `batch_id = :batch_id`, not IS NOT DISTINCT FROM: a lease in no
-- batch (an on-demand attempt) has no batch answer to repair and matches nothing.
WITH back AS (
    UPDATE tasks
    SET status = 'queued', attempts = attempts - 1, batch_lease_until = NULL, batch_id = NULL,
        message_sent_at = now(), updated_at = now()
    WHERE id = :task_id AND status = 'running' AND attempts = :attempt AND batch_id = :batch_id
      AND cancel_requested_at IS NULL
    RETURNING id, app_id, attempts
),
kept AS (
    INSERT INTO task_repairs (task_id, attempt, resume)
    SELECT id, attempts + 1, :resume FROM back
    ON CONFLICT (task_id) DO UPDATE SET attempt = EXCLUDED.attempt, resume = EXCLUDED.resume
)
SELECT id, app_id FROM back
