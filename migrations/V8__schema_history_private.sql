-- The migration history belongs to the schema's owner. V4 granted the functions' group role
-- every table in the schema, and refinery_schema_history was one of them: a function able to
-- delete a row there could make the next deploy run a migration twice, or skip one.
REVOKE ALL ON refinery_schema_history FROM aitasks_app;
