-- The lease on a running operation for one page: its row locked until the page's transaction
-- ends (its cursor and counts are written in it). SKIP LOCKED: an operation another runner is
-- paging now is left to it, so no two runners act on one page.
SELECT {{fragments/operation_columns}}
FROM operations WHERE id = :id AND state = 'running'
FOR UPDATE SKIP LOCKED
