-- memoryd schema v3: smart-ingest tasks that are claimed by a worker and
-- resumed after a crash, and learned noise.

ALTER TABLE tasks ADD COLUMN claimed_by TEXT;
ALTER TABLE tasks ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
CREATE INDEX tasks_queue ON tasks(status, space_id, created_at);

-- Vectors of memories a user marked as noise: the noise filter's third layer.
CREATE TABLE learned_noise (
    id         INTEGER PRIMARY KEY,
    tenant_id  TEXT NOT NULL,
    space_id   TEXT NOT NULL,
    memory_id  TEXT NOT NULL,
    content    TEXT NOT NULL,
    vector     BLOB NOT NULL,
    at         INTEGER NOT NULL,
    UNIQUE (space_id, memory_id)
);
