-- One page of an operation's walk over every task of the tenant: at most :page tasks after the
-- cursor in creation order, along tasks_app_created_idx (migrations/V28), created before the
-- operation was. Each comes back with whether it matches the filter now; the caller acts on
-- those that do and moves the cursor past the last one looked at.
SELECT id, created_at,
    status = ANY(:statuses::text[])
    AND (:kind::text IS NULL OR kind = :kind::text)
    AND (:model_id::text IS NULL OR model_id = :model_id::text)
    AND (:error_code::text IS NULL OR error_code = :error_code::text)
    AND (:created_after::timestamptz IS NULL OR created_at >= :created_after::timestamptz)
    AND (:created_before::timestamptz IS NULL OR created_at < :created_before::timestamptz)
    AND created_at < :operation_created_at::timestamptz AS matches
FROM tasks
WHERE app_id = :app_id AND created_at < :operation_created_at::timestamptz
  AND created_at >= :cursor_at::timestamptz AND (created_at, id) > (:cursor_at::timestamptz, :cursor_id::uuid)
ORDER BY created_at, id
LIMIT :page
