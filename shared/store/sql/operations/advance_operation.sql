-- An operation's page done: the cursor moved past the last task looked at, the page's counts
-- added (each reason's count merged into skipped_because / failed_because), and the operation
-- `done` when the walk found fewer than a page. Written under the page's lease, in the
-- transaction that acted on the page (a cancel) or after its replays were made (a replay, whose
-- replays are found again by their keys when a page is redone), so a page counts once.
UPDATE operations
SET cursor_at = :cursor_at, cursor_id = :cursor_id,
    matched = matched + :matched::bigint,
    done = done + :done::bigint,
    skipped = skipped + :skipped::bigint,
    failed = failed + :failed::bigint,
    skipped_because = (
        SELECT COALESCE(jsonb_object_agg(code, n), '{}'::jsonb)
        FROM (SELECT code, sum(n)::bigint AS n
              FROM (SELECT key AS code, value::bigint AS n FROM jsonb_each_text(operations.skipped_because)
                    UNION ALL
                    SELECT * FROM unnest(:skip_codes::text[], :skip_counts::bigint[])) parts
              GROUP BY code) sums),
    failed_because = (
        SELECT COALESCE(jsonb_object_agg(code, n), '{}'::jsonb)
        FROM (SELECT code, sum(n)::bigint AS n
              FROM (SELECT key AS code, value::bigint AS n FROM jsonb_each_text(operations.failed_because)
                    UNION ALL
                    SELECT * FROM unnest(:fail_codes::text[], :fail_counts::bigint[])) parts
              GROUP BY code) sums),
    state = CASE WHEN :finished::boolean THEN 'done' ELSE state END,
    ended_at = CASE WHEN :finished::boolean THEN now() ELSE ended_at END,
    updated_at = now()
WHERE id = :id AND state = 'running'
