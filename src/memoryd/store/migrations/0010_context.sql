-- memoryd schema: the context engine's conversations, their messages, and the summary DAG.
--
-- A conversation belongs to one tenant. Its messages are kept verbatim forever
-- (a part too large to inline lives once in context_blobs, by content hash, and
-- the message holds a pointer line). Compaction never deletes a message: it adds
-- summaries, edges from each summary to exactly what it covers, and rewrites the
-- conversation's context items (what currently stands for what) in one transaction.
CREATE TABLE conversations (
    rowid           INTEGER PRIMARY KEY,
    tenant_id       TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    agent_id        TEXT,
    title           TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (tenant_id, conversation_id)
);

CREATE TABLE context_messages (
    rowid        INTEGER PRIMARY KEY,
    conv         INTEGER NOT NULL REFERENCES conversations(rowid) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    message_id   TEXT,
    content_hash TEXT NOT NULL,
    role         TEXT NOT NULL,
    content      TEXT NOT NULL,
    tool_calls   TEXT,
    tool_results TEXT,
    tokens       INTEGER NOT NULL,
    created_at   INTEGER,
    ingested_at  INTEGER NOT NULL,
    UNIQUE (conv, seq)
);
CREATE UNIQUE INDEX context_messages_id ON context_messages(conv, message_id)
    WHERE message_id IS NOT NULL;
CREATE INDEX context_messages_hash ON context_messages(conv, content_hash);

CREATE TABLE context_blobs (
    tenant_id  TEXT NOT NULL,
    id         TEXT NOT NULL,
    name       TEXT NOT NULL,
    size       INTEGER NOT NULL,
    content    TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

CREATE TABLE summaries (
    rowid         INTEGER PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    conv          INTEGER NOT NULL REFERENCES conversations(rowid) ON DELETE CASCADE,
    kind          TEXT NOT NULL CHECK (kind IN ('leaf', 'condensed')),
    depth         INTEGER NOT NULL,
    content       TEXT NOT NULL,
    tokens        INTEGER NOT NULL,
    source_tokens INTEGER NOT NULL,
    first_seq     INTEGER NOT NULL,
    last_seq      INTEGER NOT NULL,
    summariser    TEXT NOT NULL,
    created_at    INTEGER NOT NULL
);
CREATE INDEX summaries_conv ON summaries(conv, first_seq);

-- a leaf's children are messages, a condensed summary's are summaries; ord keeps their order
CREATE TABLE summary_edges (
    summary    INTEGER NOT NULL REFERENCES summaries(rowid) ON DELETE CASCADE,
    ord        INTEGER NOT NULL,
    child_kind TEXT NOT NULL CHECK (child_kind IN ('message', 'summary')),
    child      INTEGER NOT NULL,
    PRIMARY KEY (summary, ord)
);
CREATE INDEX summary_edges_child ON summary_edges(child_kind, child);

CREATE TABLE context_items (
    conv INTEGER NOT NULL REFERENCES conversations(rowid) ON DELETE CASCADE,
    ord  INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('message', 'summary')),
    ref  INTEGER NOT NULL,
    PRIMARY KEY (conv, ord)
);

-- Both full-text indexes, as over memories: words (BM25) and trigrams (Chinese, Japanese).
CREATE VIRTUAL TABLE context_messages_fts USING fts5(
    content, content='context_messages', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE context_messages_tri USING fts5(
    content, content='context_messages', content_rowid='rowid', tokenize='trigram'
);
CREATE TRIGGER context_messages_ai AFTER INSERT ON context_messages BEGIN
    INSERT INTO context_messages_fts(rowid, content) VALUES (new.rowid, new.content);
    INSERT INTO context_messages_tri(rowid, content) VALUES (new.rowid, new.content);
END;
CREATE TRIGGER context_messages_ad AFTER DELETE ON context_messages BEGIN
    INSERT INTO context_messages_fts(context_messages_fts, rowid, content)
        VALUES ('delete', old.rowid, old.content);
    INSERT INTO context_messages_tri(context_messages_tri, rowid, content)
        VALUES ('delete', old.rowid, old.content);
END;

CREATE VIRTUAL TABLE summaries_fts USING fts5(
    content, content='summaries', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE summaries_tri USING fts5(
    content, content='summaries', content_rowid='rowid', tokenize='trigram'
);
CREATE TRIGGER summaries_ai AFTER INSERT ON summaries BEGIN
    INSERT INTO summaries_fts(rowid, content) VALUES (new.rowid, new.content);
    INSERT INTO summaries_tri(rowid, content) VALUES (new.rowid, new.content);
END;
CREATE TRIGGER summaries_ad AFTER DELETE ON summaries BEGIN
    INSERT INTO summaries_fts(summaries_fts, rowid, content)
        VALUES ('delete', old.rowid, old.content);
    INSERT INTO summaries_tri(summaries_tri, rowid, content)
        VALUES ('delete', old.rowid, old.content);
END;
