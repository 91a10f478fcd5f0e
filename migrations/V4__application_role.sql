-- The functions connect as a role that can read and write rows but not change the schema.
--
-- `aitasks_app` is a group role (no login) holding exactly the data privileges. The login the
-- functions use (the secret behind AITASK_DATABASE_SECRET_ARN) is made a member of it by the
-- operator, for example: CREATE ROLE aitasks_fn LOGIN PASSWORD '...' IN ROLE aitasks_app.
-- Migrations run as the schema owner (the migrate function's own secret). Tables created by
-- later migrations are covered by the default privileges below.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'aitasks_app') THEN
        CREATE ROLE aitasks_app NOLOGIN;
    END IF;
END
$$;

REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO aitasks_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO aitasks_app;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO aitasks_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO aitasks_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO aitasks_app;
