-- memoryd: a memory found by its key within a space.
--
-- Lookups by key (an upsert by key, the proxy's facts, an import's keyed
-- records) filter by space, not by tenant: the unique index on (tenant_id,
-- space_id, key) could not serve them, and each one walked every memory of
-- the space (about 0.1 s at 100,000 memories). The unique index stays: it is
-- the rule that a live key is held once. This one holds deleted memories' keys
-- too: a lookup of live ones (state = 'active') could not use it otherwise.
CREATE INDEX memories_space_key ON memories(space_id, key) WHERE key IS NOT NULL;
