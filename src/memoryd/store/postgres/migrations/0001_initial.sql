-- memoryd on PostgreSQL, schema 1: the tables of the SQLite schema (migrations 0001-0016)
-- with PostgreSQL's types. Times are BIGINT microseconds since the Unix epoch (UTC), as
-- in SQLite; JSON columns are jsonb; vectors are pgvector's ``vector`` (the dimension is
-- the embedding model's, fixed when the store is bound to it, with its HNSW index).

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE tenants (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    status     TEXT NOT NULL DEFAULT 'active',
    created_at BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    key_hash     TEXT NOT NULL UNIQUE,
    prefix       TEXT NOT NULL,
    name         TEXT NOT NULL DEFAULT '',
    is_admin     BOOLEAN NOT NULL DEFAULT FALSE,
    created_at   BIGINT NOT NULL,
    revoked_at   BIGINT,
    last_used_at BIGINT
);
CREATE INDEX api_keys_tenant ON api_keys(tenant_id);

CREATE TABLE spaces (
    id         TEXT PRIMARY KEY,
    space_type TEXT NOT NULL CHECK (space_type IN ('personal', 'team', 'organization')),
    name       TEXT NOT NULL DEFAULT '',
    owner_id   TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX spaces_owner ON spaces(owner_id);

CREATE TABLE space_members (
    space_id   TEXT NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL,
    role       TEXT NOT NULL CHECK (role IN ('admin', 'member', 'reader')),
    joined_at  BIGINT NOT NULL,
    status     TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'invited')),
    invited_by TEXT,
    PRIMARY KEY (space_id, user_id)
);
CREATE INDEX space_members_user ON space_members(user_id, status);

CREATE TABLE auto_share_rules (
    id               TEXT PRIMARY KEY,
    space_id         TEXT NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
    source_space     TEXT NOT NULL,
    categories       JSONB NOT NULL DEFAULT '[]',
    tags             JSONB NOT NULL DEFAULT '[]',
    min_importance   DOUBLE PRECISION NOT NULL DEFAULT 0,
    require_approval BOOLEAN NOT NULL DEFAULT FALSE,
    created_at       BIGINT NOT NULL
);
CREATE INDEX auto_share_rules_source ON auto_share_rules(source_space);

-- Chinese, Japanese and Korean runs cut into overlapping bigrams and trigrams, as
-- lexemes (a run of one character stays whole): the keyword leg's second index, as
-- SQLite's trigram and bigram indexes are, so text without spaces is found by its
-- two- and three-character words.
CREATE FUNCTION memoryd_grams(body TEXT) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT COALESCE(array_to_tsvector(array_agg(DISTINCT g)), ''::tsvector)
    FROM (
        SELECT m[1] AS run
        FROM regexp_matches(
            body, '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+', 'g'
        ) AS m
    ) runs,
    LATERAL (
        SELECT substr(run, i, n) AS g
        FROM generate_series(2, 3) AS n, LATERAL generate_series(1, length(run) - n + 1) AS i
        UNION ALL
        SELECT run WHERE length(run) = 1
    ) grams
$$;

CREATE TABLE memories (
    rowid            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
    importance       DOUBLE PRECISION NOT NULL,
    confidence       DOUBLE PRECISION NOT NULL,
    access_count     BIGINT NOT NULL DEFAULT 0,
    tags             JSONB NOT NULL DEFAULT '[]',
    scope            TEXT NOT NULL DEFAULT 'global',
    agent_id         TEXT,
    session_id       TEXT,
    source           TEXT,
    relations        JSONB NOT NULL DEFAULT '[]',
    superseded_by    TEXT,
    invalidated_at   BIGINT,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    last_accessed_at BIGINT,
    visibility       TEXT NOT NULL DEFAULT 'global',
    owner_agent_id   TEXT NOT NULL DEFAULT '',
    provenance       JSONB,
    version          BIGINT,
    valid_from       BIGINT,
    valid_to         BIGINT,
    expires_at       BIGINT,
    key              TEXT,
    marks            JSONB NOT NULL DEFAULT '[]',
    vector           vector,
    -- the keyword leg: English words (stemmed), and CJK trigrams
    words tsvector GENERATED ALWAYS AS (
        to_tsvector('english', content || ' ' || l0_abstract)
    ) STORED,
    grams tsvector GENERATED ALWAYS AS (memoryd_grams(content || ' ' || l0_abstract)) STORED
);
CREATE INDEX memories_space_created ON memories(space_id, created_at);
CREATE INDEX memories_session ON memories(space_id, session_id);
CREATE INDEX memories_tenant ON memories(tenant_id, space_id);
CREATE UNIQUE INDEX memories_key ON memories(tenant_id, space_id, key)
    WHERE key IS NOT NULL AND state != 'deleted';
CREATE INDEX memories_shared_from ON memories(space_id, (provenance ->> 'shared_from_memory'))
    WHERE provenance IS NOT NULL;
CREATE INDEX memories_superseded_by ON memories(superseded_by) WHERE superseded_by IS NOT NULL;
CREATE INDEX memories_words ON memories USING gin (words);
CREATE INDEX memories_grams ON memories USING gin (grams);
CREATE INDEX memories_tags ON memories USING gin (tags jsonb_path_ops);

CREATE TABLE memory_history (
    id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    memory_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    space_id  TEXT NOT NULL,
    action    TEXT NOT NULL,
    -- text, not jsonb: an export writes them back with their keys in their order
    old_value TEXT,
    new_value TEXT,
    actor     TEXT,
    at        BIGINT NOT NULL
);
CREATE INDEX memory_history_memory ON memory_history(memory_id, id);
CREATE INDEX memory_history_space ON memory_history(tenant_id, space_id, id);

CREATE TABLE session_messages (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id  TEXT NOT NULL,
    space_id   TEXT NOT NULL,
    session_id TEXT NOT NULL,
    agent_id   TEXT,
    role       TEXT NOT NULL,
    content    TEXT NOT NULL,
    msg_hash   TEXT NOT NULL,
    said_at    BIGINT,
    stored_at  BIGINT NOT NULL,
    memory_id  TEXT,
    UNIQUE (tenant_id, space_id, session_id, msg_hash)
);
CREATE INDEX session_messages_hash ON session_messages(space_id, msg_hash, stored_at);

CREATE TABLE tasks (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL,
    space_id     TEXT NOT NULL,
    kind         TEXT NOT NULL,
    status       TEXT NOT NULL,
    payload      JSONB NOT NULL DEFAULT '{}',
    result       JSONB NOT NULL DEFAULT '{}',
    errors       JSONB NOT NULL DEFAULT '[]',
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    completed_at BIGINT,
    claimed_by   TEXT,
    attempts     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX tasks_queue ON tasks(status, kind, created_at);
CREATE INDEX tasks_running ON tasks(space_id) WHERE status = 'running';
CREATE INDEX tasks_tenant ON tasks(tenant_id, created_at);

CREATE TABLE import_tasks (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL,
    space_id     TEXT NOT NULL,
    filename     TEXT NOT NULL DEFAULT '',
    file_type    TEXT NOT NULL DEFAULT '',
    content_hash TEXT NOT NULL,
    strategy     TEXT NOT NULL DEFAULT 'auto',
    status       TEXT NOT NULL,
    detail       JSONB NOT NULL DEFAULT '{}',
    created_at   BIGINT NOT NULL,
    completed_at BIGINT
);
CREATE INDEX import_tasks_space ON import_tasks(tenant_id, space_id, created_at);
CREATE INDEX import_tasks_hash ON import_tasks(tenant_id, content_hash);

CREATE TABLE import_changes (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    import_id      TEXT NOT NULL,
    memory_id      TEXT NOT NULL,
    action         TEXT NOT NULL,
    before         JSONB,
    vector         vector,
    history_cutoff BIGINT,
    UNIQUE (import_id, memory_id)
);

CREATE TABLE embed_cache (
    model  TEXT NOT NULL,
    hash   BYTEA NOT NULL,
    vector BYTEA NOT NULL,
    PRIMARY KEY (model, hash)
);

CREATE TABLE sharing_events (
    id              TEXT PRIMARY KEY,
    action          TEXT NOT NULL,
    memory_id       TEXT NOT NULL,
    from_space      TEXT NOT NULL,
    to_space        TEXT NOT NULL,
    user_id         TEXT NOT NULL,
    agent_id        TEXT NOT NULL DEFAULT '',
    content_preview TEXT NOT NULL DEFAULT '',
    at              BIGINT NOT NULL
);
CREATE INDEX sharing_events_user ON sharing_events(user_id, at);

CREATE TABLE learned_noise (
    id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    space_id  TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    content   TEXT NOT NULL,
    vector    vector NOT NULL,
    at        BIGINT NOT NULL,
    UNIQUE (space_id, memory_id)
);

CREATE TABLE pending_embeddings (
    seq       BIGINT GENERATED ALWAYS AS IDENTITY,
    memory_id TEXT PRIMARY KEY,
    space_id  TEXT NOT NULL,
    queued_at BIGINT NOT NULL
);

CREATE TABLE tenant_settings (
    tenant_id  TEXT NOT NULL,
    name       TEXT NOT NULL,
    value      JSONB NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, name)
);

CREATE TABLE memory_metadata (
    memory_id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    value     JSONB NOT NULL
);

CREATE TABLE checkpoints (
    id         TEXT PRIMARY KEY,
    tenant_id  TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    session_id TEXT NOT NULL,
    project    TEXT NOT NULL DEFAULT '',
    trigger    TEXT NOT NULL,
    saves      INTEGER NOT NULL DEFAULT 1,
    mechanical TEXT NOT NULL,
    summary    TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX checkpoints_session ON checkpoints(tenant_id, agent_id, session_id);
CREATE INDEX checkpoints_recent ON checkpoints(tenant_id, updated_at);

CREATE TABLE session_layers (
    id         TEXT PRIMARY KEY,
    tenant_id  TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    session_id TEXT NOT NULL,
    project    TEXT NOT NULL DEFAULT '',
    depth      INTEGER NOT NULL CHECK (depth IN (0, 1, 2, 5, 6)),
    seq        INTEGER NOT NULL DEFAULT 0,
    key        TEXT NOT NULL DEFAULT '',
    role       TEXT,
    content    TEXT NOT NULL,
    basis      INTEGER NOT NULL DEFAULT 0,
    memory_id  TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    expires_at BIGINT
);
CREATE UNIQUE INDEX session_layers_key
    ON session_layers(tenant_id, agent_id, session_id, depth, key);
CREATE INDEX session_layers_expiry ON session_layers(expires_at) WHERE expires_at IS NOT NULL;
