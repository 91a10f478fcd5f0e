-- The system-wide count of active scoped tasks, for the optional cap on every application's
-- scoped work together (AITASK_SYSTEM_ACTIVE_CAP): it protects a provider all tenants share.
--
-- It follows the per-application counters (app_concurrency, V3) through a trigger, so every
-- statement that raises or lowers those (admission, settlements, sweeps, deletes) keeps this
-- one right without knowing of it. 128 shards: an application's 32 scope shards land on 32
-- different rows here ((hash of the application) XOR (its shard)), so admissions and
-- settlements of different applications rarely wait on the same row. The cap's exactness
-- argument is the application cap's (shared lock far from it, exclusive near it; admission.rs).

CREATE TABLE system_concurrency (
    shard smallint PRIMARY KEY,
    active bigint NOT NULL DEFAULT 0
);
INSERT INTO system_concurrency (shard, active) SELECT s, 0 FROM generate_series(0, 127) s;

CREATE FUNCTION system_shard(app_id text, app_shard smallint) RETURNS smallint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ((hashtext(app_id) # app_shard) & 127)::smallint;

UPDATE system_concurrency SET active = counted.active
FROM (SELECT system_shard(app_id, shard) AS counted_shard, sum(active) AS active
      FROM app_concurrency GROUP BY 1) counted
WHERE shard = counted_shard;

CREATE FUNCTION follow_app_concurrency() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    delta bigint := CASE TG_OP WHEN 'INSERT' THEN NEW.active
                               WHEN 'DELETE' THEN -OLD.active
                               ELSE NEW.active - OLD.active END;
BEGIN
    IF delta <> 0 THEN
        UPDATE system_concurrency SET active = active + delta
        WHERE shard = system_shard(COALESCE(NEW.app_id, OLD.app_id), COALESCE(NEW.shard, OLD.shard));
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER app_concurrency_follows AFTER INSERT OR UPDATE OR DELETE ON app_concurrency
    FOR EACH ROW EXECUTE FUNCTION follow_app_concurrency();
