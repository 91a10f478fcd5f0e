-- Provider-side limits shared by every worker instance (AITASK_MODELS `limits`): one row per
-- profile per UTC minute counts the calls started and the tokens they used
-- (requestsPerMinute, tokensPerMinute), and one row per concurrency slot of a profile holds a
-- lease (concurrent). Only profiles with limits touch either table. A slot's lease expires on its
-- own, so a worker that dies while calling frees its slot when the lease runs out.
CREATE TABLE provider_usage (
    profile_id text NOT NULL,
    minute timestamptz NOT NULL,
    requests integer NOT NULL,
    tokens bigint NOT NULL,
    PRIMARY KEY (profile_id, minute)
);
CREATE INDEX provider_usage_minute_idx ON provider_usage (minute);

CREATE TABLE provider_slots (
    profile_id text NOT NULL,
    slot integer NOT NULL,
    lease_until timestamptz NOT NULL,
    PRIMARY KEY (profile_id, slot)
);

-- The sweeper takes back what its parent task left running: nothing more to add here. The
-- functions' role reads and writes both tables through the default privileges of V4.
