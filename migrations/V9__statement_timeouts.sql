-- Every login of the functions' group role gets a statement timeout and an idle-in-transaction
-- timeout, so a statement stuck on a lock or a session left open by a dead client cannot hold
-- a worker, a connection or a row forever. They are role settings (applied by the server when
-- the login connects) because RDS Proxy refuses startup options and pins a session on SET.
-- A login created after this migration needs the same two lines (README, "Deploying").
DO $$
DECLARE
    login name;
BEGIN
    FOR login IN
        SELECT r.rolname FROM pg_roles r
        JOIN pg_auth_members m ON m.member = r.oid
        JOIN pg_roles g ON g.oid = m.roleid AND g.rolname = 'aitasks_app'
        WHERE r.rolcanlogin
    LOOP
        BEGIN
            EXECUTE format('ALTER ROLE %I SET statement_timeout = %L', login, '30s');
            EXECUTE format('ALTER ROLE %I SET idle_in_transaction_session_timeout = %L', login, '60s');
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE WARNING 'could not set the timeouts of %: run ALTER ROLE % SET statement_timeout = ''30s'' as an administrator', login, login;
        END;
    END LOOP;
END
$$;
