-- The narrowed page of a listing, after the statement's bounded walk `examined` (the ids of at
-- most :examine_max tasks after :after, in id order): the filters keep what they keep of those.
-- `edge` always answers one row, with the last task looked at and how many: when the page is
-- short because the walk stopped (n = :examine_max), the next page starts after that task (the
-- caller answers it as `next`), so a filter that matches few tasks answers in several short pages
-- instead of one long scan. The one home of this part: the listings of a run and of a scope
-- differ only in their walk (src/statement.rs).
edge AS (
    SELECT (SELECT id FROM examined ORDER BY id DESC LIMIT 1) AS last_examined,
        (SELECT count(*) FROM examined) AS examined
),
page AS (
    SELECT {{fragments/task_columns}}
    FROM tasks
    WHERE id IN (SELECT id FROM examined) AND app_id = :app_id
      AND (:status::text IS NULL OR status = :status::text)
      AND (:kind::text IS NULL OR kind = :kind::text)
      AND (:model_id::text IS NULL OR model_id = :model_id::text)
      AND (:created_after::timestamptz IS NULL OR created_at >= :created_after::timestamptz)
      AND (:created_before::timestamptz IS NULL OR created_at < :created_before::timestamptz)
    ORDER BY id
    LIMIT :limit
)
SELECT page.*, edge.last_examined, edge.examined
FROM edge
LEFT JOIN page ON true
ORDER BY page.id
