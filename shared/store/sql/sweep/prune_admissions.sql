-- Admission history older than the budgets' 24 h horizon goes, a bounded page at a time.
DELETE FROM scope_admissions WHERE task_id IN (
    SELECT task_id FROM scope_admissions
    WHERE created_at < now() - :older_than_ms::bigint * interval '1 millisecond'
    ORDER BY created_at LIMIT :page
    FOR UPDATE SKIP LOCKED)
