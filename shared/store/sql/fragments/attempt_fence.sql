-- The lease's fence, the rule that makes settlement happen once: a statement that ends, fails, gives
-- back or requeues an attempt changes the task only while it is still running this attempt
-- (:attempt), in the provider batch that holds it (:batch_id; NULL on-demand), and no cancel was
-- requested (a canceled task is settled by end_canceled.sql instead). The loader writes it out in
-- every statement that names it (src/statement.rs). Three fences differ on purpose, each saying
-- why, and the test every_running_attempt_is_fenced_by_the_one_fence lists them:
-- settle/complete_many.sql (this fence item by item), repair/give_back_for_repair.sql (only a
-- task still in the given batch) and lease/check.sql, lease/heartbeat.sql (task and attempt alone).
id = :task_id AND status = 'running' AND attempts = :attempt
    AND batch_id IS NOT DISTINCT FROM :batch_id
    AND cancel_requested_at IS NULL
