-- memoryd schema v1. Timestamps are INTEGER microseconds since the Unix epoch (UTC):
-- exact round trips, cheap range filters. JSON columns hold arrays/objects as text.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- seq increases by one per write transaction that touches memories; the
-- in-process vector index reads rows with a newer seq to catch up with writes
-- from other processes.
CREATE TABLE counters (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
INSERT INTO counters (name, value) VALUES ('seq', 0);

CREATE TABLE tenants (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    status     TEXT NOT NULL DEFAULT 'active',
    created_at INTEGER NOT NULL
);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    key_hash     TEXT NOT NULL UNIQUE,
    prefix       TEXT NOT NULL,
    name         TEXT NOT NULL DEFAULT '',
    is_admin     INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    revoked_at   INTEGER,
    last_used_at INTEGER
);
CREATE INDEX api_keys_tenant ON api_keys(tenant_id);

CREATE TABLE spaces (
    id         TEXT PRIMARY KEY,
    space_type TEXT NOT NULL CHECK (space_type IN ('personal', 'team', 'organization')),
    name       TEXT NOT NULL DEFAULT '',
    owner_id   TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE space_members (
    space_id  TEXT NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
    user_id   TEXT NOT NULL,
    role      TEXT NOT NULL CHECK (role IN ('admin', 'member', 'reader')),
    joined_at INTEGER NOT NULL,
    PRIMARY KEY (space_id, user_id)
);
CREATE INDEX space_members_user ON space_members(user_id);

CREATE TABLE auto_share_rules (
    id               TEXT PRIMARY KEY,
    space_id         TEXT NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
    source_space     TEXT NOT NULL,
    categories       TEXT NOT NULL DEFAULT '[]',
    tags             TEXT NOT NULL DEFAULT '[]',
    min_importance   REAL NOT NULL DEFAULT 0,
    require_approval INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL
);

CREATE TABLE memories (
    rowid            INTEGER PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    tenant_id        TEXT NOT NULL,
    space_id         TEXT NOT NULL,
    content          TEXT NOT NULL,
    l0_abstract      TEXT NOT NULL DEFAULT '',
    l1_overview      TEXT NOT NULL DEFAULT '',
    l2_content       TEXT NOT NULL DEFAULT '',
    category         TEXT NOT NULL,
    memory_type      TEXT NOT NULL,
    state            TEXT NOT NULL,
    tier             TEXT NOT NULL,
    importance       REAL NOT NULL,
    confidence       REAL NOT NULL,
    access_count     INTEGER NOT NULL DEFAULT 0,
    tags             TEXT NOT NULL DEFAULT '[]',
    scope            TEXT NOT NULL DEFAULT 'global',
    agent_id         TEXT,
    session_id       TEXT,
    source           TEXT,
    relations        TEXT NOT NULL DEFAULT '[]',
    superseded_by    TEXT,
    invalidated_at   INTEGER,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    last_accessed_at INTEGER,
    visibility       TEXT NOT NULL DEFAULT 'global',
    owner_agent_id   TEXT NOT NULL DEFAULT '',
    provenance       TEXT,
    version          INTEGER,
    valid_from       INTEGER,
    valid_to         INTEGER,
    expires_at       INTEGER,
    key              TEXT,
    vector           BLOB,
    seq              INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX memories_space_seq ON memories(tenant_id, space_id, seq);
CREATE INDEX memories_space_created ON memories(tenant_id, space_id, created_at);
CREATE INDEX memories_session ON memories(tenant_id, space_id, session_id);
CREATE UNIQUE INDEX memories_key ON memories(tenant_id, space_id, key)
    WHERE key IS NOT NULL AND state != 'deleted';

-- Two full-text indexes over the same rows: words (BM25, English stemming)
-- and trigrams (substring match for Chinese / Japanese text).
CREATE VIRTUAL TABLE memories_fts USING fts5(
    content, l0_abstract, content='memories', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE memories_tri USING fts5(
    content, l0_abstract, content='memories', content_rowid='rowid',
    tokenize='trigram'
);
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, content, l0_abstract)
        VALUES (new.rowid, new.content, new.l0_abstract);
    INSERT INTO memories_tri(rowid, content, l0_abstract)
        VALUES (new.rowid, new.content, new.l0_abstract);
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content, l0_abstract)
        VALUES ('delete', old.rowid, old.content, old.l0_abstract);
    INSERT INTO memories_tri(memories_tri, rowid, content, l0_abstract)
        VALUES ('delete', old.rowid, old.content, old.l0_abstract);
END;
CREATE TRIGGER memories_au AFTER UPDATE OF content, l0_abstract ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content, l0_abstract)
        VALUES ('delete', old.rowid, old.content, old.l0_abstract);
    INSERT INTO memories_tri(memories_tri, rowid, content, l0_abstract)
        VALUES ('delete', old.rowid, old.content, old.l0_abstract);
    INSERT INTO memories_fts(rowid, content, l0_abstract)
        VALUES (new.rowid, new.content, new.l0_abstract);
    INSERT INTO memories_tri(rowid, content, l0_abstract)
        VALUES (new.rowid, new.content, new.l0_abstract);
END;

-- Every create / update / state change, with the values before and after.
CREATE TABLE memory_history (
    id         INTEGER PRIMARY KEY,
    memory_id  TEXT NOT NULL,
    tenant_id  TEXT NOT NULL,
    space_id   TEXT NOT NULL,
    action     TEXT NOT NULL,
    old_value  TEXT,
    new_value  TEXT,
    actor      TEXT,
    at         INTEGER NOT NULL
);
CREATE INDEX memory_history_memory ON memory_history(memory_id, id);

-- Raw conversation messages, stored before anything smart happens.
CREATE TABLE session_messages (
    id         INTEGER PRIMARY KEY,
    tenant_id  TEXT NOT NULL,
    space_id   TEXT NOT NULL,
    session_id TEXT NOT NULL,
    agent_id   TEXT,
    role       TEXT NOT NULL,
    content    TEXT NOT NULL,
    msg_hash   TEXT NOT NULL,
    said_at    INTEGER,
    stored_at  INTEGER NOT NULL,
    memory_id  TEXT,
    UNIQUE (tenant_id, space_id, session_id, msg_hash)
);

-- Background work (smart ingest, imports), persisted so it resumes after a crash.
CREATE TABLE tasks (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL,
    space_id     TEXT NOT NULL,
    kind         TEXT NOT NULL,
    status       TEXT NOT NULL,
    payload      TEXT NOT NULL DEFAULT '{}',
    result       TEXT NOT NULL DEFAULT '{}',
    errors       TEXT NOT NULL DEFAULT '[]',
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    completed_at INTEGER
);
CREATE INDEX tasks_status ON tasks(status, kind);

CREATE TABLE import_tasks (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL,
    space_id     TEXT NOT NULL,
    filename     TEXT NOT NULL DEFAULT '',
    file_type    TEXT NOT NULL DEFAULT '',
    content_hash TEXT NOT NULL,
    strategy     TEXT NOT NULL DEFAULT 'auto',
    status       TEXT NOT NULL,
    detail       TEXT NOT NULL DEFAULT '{}',
    created_at   INTEGER NOT NULL,
    completed_at INTEGER
);
CREATE INDEX import_tasks_hash ON import_tasks(tenant_id, content_hash);

-- Vectors by content hash, so the same text is never embedded twice.
CREATE TABLE embed_cache (
    model  TEXT NOT NULL,
    hash   BLOB NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, hash)
) WITHOUT ROWID;
