-- Provider-side limits, fair between tenants. A concurrency slot is now held by one holder (a
-- random token of the worker's call): only that holder gives it back, so a late give-back of a
-- slot whose hold ran out never frees the slot of the call that took it next.
ALTER TABLE provider_slots RENAME COLUMN lease_until TO held_until;
ALTER TABLE provider_slots ADD COLUMN holder uuid;

-- The line of tenants waiting at a limited profile: a tenant refused at a limit waits in line
-- until `waiting_until`, and a free slot or a call of the minute goes to no tenant while
-- another waits that was served less recently (`last_served`). One row per profile and tenant
-- that has used a limited profile; the sweeper prunes the ones idle for an hour.
CREATE TABLE provider_line (
    profile_id text NOT NULL,
    app_id text NOT NULL,
    last_served timestamptz,
    waiting_until timestamptz,
    PRIMARY KEY (profile_id, app_id)
);
