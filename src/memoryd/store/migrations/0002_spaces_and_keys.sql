-- memoryd schema v2: spaces shared by several tenants, sharing events, ingest tasks.
--
-- A team space holds memories written by several tenants, so memories are
-- found by space (access is membership, checked in filters.where_clause) and
-- the space-first indexes replace the tenant-first ones.

DROP INDEX memories_space_seq;
DROP INDEX memories_space_created;
DROP INDEX memories_session;
CREATE INDEX memories_space_seq ON memories(space_id, seq);
CREATE INDEX memories_space_created ON memories(space_id, created_at);
CREATE INDEX memories_session ON memories(space_id, session_id);
-- a shared copy is found from its original (share is idempotent per target space)
CREATE INDEX memories_shared_from ON memories(
    space_id, json_extract(provenance, '$.shared_from_memory')
) WHERE provenance IS NOT NULL;

CREATE INDEX spaces_owner ON spaces(owner_id);
CREATE INDEX auto_share_rules_source ON auto_share_rules(source_space);

-- Every share, pull, unshare and reshare, for the sharing stats and audit.
CREATE TABLE sharing_events (
    id              TEXT PRIMARY KEY,
    action          TEXT NOT NULL,
    memory_id       TEXT NOT NULL,
    from_space      TEXT NOT NULL,
    to_space        TEXT NOT NULL,
    user_id         TEXT NOT NULL,
    agent_id        TEXT NOT NULL DEFAULT '',
    content_preview TEXT NOT NULL DEFAULT '',
    at              INTEGER NOT NULL
);
CREATE INDEX sharing_events_user ON sharing_events(user_id, at);
CREATE INDEX tasks_tenant ON tasks(tenant_id, created_at);
