-- Each claim statement marks the rows it takes with a token of its own, so that a worker that
-- stopped waiting for its claim's answer (the invocation's deadline was near) can give back
-- exactly what that claim took, uncounted, if it committed after all (lease/unclaim.sql).
ALTER TABLE tasks ADD COLUMN claim_token uuid;
