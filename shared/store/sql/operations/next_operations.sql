-- The running operations, the one worked on least recently first (each page writes
-- updated_at): the sweeper gives each one page a turn, round robin. At most :page of them.
SELECT id FROM operations WHERE state = 'running'
ORDER BY updated_at, id
LIMIT :page
