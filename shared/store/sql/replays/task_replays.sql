-- A task's replays, oldest first (ids are UUIDv7), at most :limit, along task_replays' primary
-- key, each with its task's status and key. One row always comes back when the tenant has the
-- task (`original` set; the replay's columns NULL when it has none), none when it has not.
WITH original AS (
    SELECT id FROM tasks WHERE id = :task_id AND app_id = :app_id
),
replays AS (
    SELECT task_replays.replay_id, task_replays.operation_id, tasks.status, tasks.effect_key,
        tasks.created_at
    FROM task_replays JOIN tasks ON tasks.id = task_replays.replay_id
    WHERE task_replays.original_id = :task_id AND task_replays.app_id = :app_id
    ORDER BY task_replays.replay_id
    LIMIT :limit
)
SELECT original.id AS original, replays.*
FROM original LEFT JOIN replays ON true
ORDER BY replays.replay_id
