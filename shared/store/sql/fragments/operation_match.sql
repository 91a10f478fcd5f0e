-- Whether a task a walk looked at matches its operation's filter, as `matches`: the one home of
-- the filter, for the walks of a run, a scope and the tenant (sql/operations/walk_*.sql); it
-- matches only tasks created before the operation.
status = ANY(:statuses::text[])
    AND (:kind::text IS NULL OR kind = :kind::text)
    AND (:model_id::text IS NULL OR model_id = :model_id::text)
    AND (:error_code::text IS NULL OR error_code = :error_code::text)
    AND (:created_after::timestamptz IS NULL OR created_at >= :created_after::timestamptz)
    AND (:created_before::timestamptz IS NULL OR created_at < :created_before::timestamptz)
    AND created_at < :operation_created_at::timestamptz AS matches
