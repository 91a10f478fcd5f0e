-- The X-Ray trace header of the request that created a task (NULL when it was not traced): the
-- worker continues that trace, so a task's create, send, claim, provider call and settlement
-- are one trace whichever invocations and redeliveries they span. Adding a nullable column
-- without a default rewrites nothing.
ALTER TABLE tasks ADD COLUMN trace_header text;
