-- memoryd: a memory found by its key within a space (see the SQLite migration
-- 0019): lookups filter by space, and the unique index leads with the tenant.
CREATE INDEX memories_space_key ON memories(space_id, key) WHERE key IS NOT NULL;
