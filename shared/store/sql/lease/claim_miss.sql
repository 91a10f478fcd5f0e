-- Why a claim claimed nothing: the task's state (a duplicate delivery, a cancel, a deleted task).
SELECT status, cancel_requested_at IS NOT NULL AS cancel_requested FROM tasks WHERE id = :task_id
