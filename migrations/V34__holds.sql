-- Holds (docs/api.md, "Holds"): a tenant's hold of a model profile or of one of its scopes, and
-- the automatic hold of a profile whose provider keeps failing (app_id NULL: every tenant's). A
-- held task is parked: it stays `queued`, its attempt given back uncounted, with
-- `message_sent_at = 'infinity'` so that no message sweep re-sends it (take_unsent.sql,
-- take_lost.sql, owed_beyond.sql compare it with a time before now) and the queue timeout passes
-- it by (expire_queued.sql); the hold it waits for lists it in `held_tasks`, in creation order.
CREATE TABLE IF NOT EXISTS holds (
    id          uuid PRIMARY KEY,
    -- The tenant's hold, or NULL: an automatic hold (a profile, for every tenant).
    app_id      text,
    profile     text,
    scope_id    text,
    reason      text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    released_at timestamptz,
    released_by text,
    -- The probe's lease (an automatic hold's): the parked task sent to find out whether the
    -- provider answers again, and until when no other is sent.
    probe_task  uuid,
    probe_until timestamptz,
    -- The release's re-send of the parked tasks is finished (the sweeper finishes what the
    -- release did not).
    resent      boolean NOT NULL DEFAULT false,
    CONSTRAINT holds_target_check CHECK ((profile IS NULL) <> (scope_id IS NULL)),
    CONSTRAINT holds_automatic_check CHECK (app_id IS NOT NULL OR profile IS NOT NULL),
    CONSTRAINT holds_reason_check CHECK (reason IS NULL OR char_length(reason) BETWEEN 1 AND 500),
    CONSTRAINT holds_released_check CHECK (
        (released_at IS NULL AND released_by IS NULL)
        OR (released_at IS NOT NULL AND released_by IN ('person', 'probe'))),
    CONSTRAINT holds_released_by_probe_check CHECK (released_by IS DISTINCT FROM 'probe' OR app_id IS NULL)
);

-- At most one active hold per tenant and target, and one automatic hold per profile. The first
-- two also serve the claim's look at a tenant's active holds; the third its look at the
-- automatic ones.
CREATE UNIQUE INDEX IF NOT EXISTS holds_active_profile_idx ON holds (app_id, profile)
    WHERE released_at IS NULL AND app_id IS NOT NULL AND profile IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS holds_active_scope_idx ON holds (app_id, scope_id)
    WHERE released_at IS NULL AND scope_id IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS holds_active_automatic_idx ON holds (profile)
    WHERE released_at IS NULL AND app_id IS NULL;
-- A tenant's listing, in creation order (ids are UUIDv7); the automatic holds' listing.
CREATE INDEX IF NOT EXISTS holds_app_idx ON holds (app_id, id);
CREATE INDEX IF NOT EXISTS holds_automatic_idx ON holds (id) WHERE app_id IS NULL;
-- The sweeper's duty (holds/unfinished_holds.sql): released holds whose parked tasks are not all
-- sent again, and the holds released lately. (Active automatic holds: holds_active_automatic_idx.)
CREATE INDEX IF NOT EXISTS holds_unsent_idx ON holds (id) WHERE released_at IS NOT NULL AND NOT resent;
CREATE INDEX IF NOT EXISTS holds_released_idx ON holds (released_at) WHERE released_at IS NOT NULL;

-- The tasks parked under each hold, in creation order (task ids are UUIDv7). A task held by
-- several holds (its scope's and its profiles') is listed under each: the first released sends it
-- again, and a claim that finds it still held parks it again. No foreign key: a row whose task is
-- gone (deleted with its scope's data) or no longer parked is passed by and deleted with its
-- release page.
CREATE TABLE IF NOT EXISTS held_tasks (
    hold_id uuid NOT NULL REFERENCES holds (id) ON DELETE CASCADE,
    task_id uuid NOT NULL,
    PRIMARY KEY (hold_id, task_id)
);

-- A released task's queue timeout counts from its release (expire_queued.sql).
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS unheld_at timestamptz;

-- The automatic hold's count: attempts of different tasks in a row whose call at the profile
-- failed on the provider's side (5xx, 408, a timeout, a connection error, a 429 without a usable
-- Retry-After). A call the provider answers resets it.
CREATE TABLE IF NOT EXISTS profile_failures (
    profile    text PRIMARY KEY,
    failures   integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
    last_task  uuid,
    updated_at timestamptz NOT NULL DEFAULT now()
);
