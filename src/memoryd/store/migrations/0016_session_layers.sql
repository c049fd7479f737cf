-- memoryd: layered session memory (seed 004's D0..D6).
--
-- D6 rows are the raw transcript, one per message (key: a hash of its role,
-- time and text, so a host that reports the same message again adds
-- nothing); D5 (the exchange summary), D2 (outline), D1 (gist) and D0
-- (themes) are one row each per session (key ''). ``basis`` is how many D6
-- rows a summary layer was built from, so consolidation knows a stale one;
-- ``memory_id`` is the searchable memory made from a kept layer.
-- ``expires_at`` NULL keeps a row; the retention job deletes the others.
CREATE TABLE session_layers (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    project TEXT NOT NULL DEFAULT '',
    depth INTEGER NOT NULL CHECK (depth IN (0, 1, 2, 5, 6)),
    seq INTEGER NOT NULL DEFAULT 0,
    key TEXT NOT NULL DEFAULT '',
    role TEXT,
    content TEXT NOT NULL,
    basis INTEGER NOT NULL DEFAULT 0,
    memory_id TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    expires_at INTEGER
);
CREATE UNIQUE INDEX session_layers_key
    ON session_layers(tenant_id, agent_id, session_id, depth, key);
CREATE INDEX session_layers_seq ON session_layers(tenant_id, agent_id, session_id, depth, seq);
CREATE INDEX session_layers_expiry ON session_layers(expires_at) WHERE expires_at IS NOT NULL;
