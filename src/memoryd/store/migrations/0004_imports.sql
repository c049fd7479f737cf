-- memoryd schema v4: file imports that can be rolled back exactly.
--
-- Every memory an import creates, and the full row (vector and history
-- position included) of every memory it changes, is journalled in the same
-- transaction as the write itself. Rollback deletes the first and restores
-- the second, so the store ends exactly as it was before the import.
CREATE TABLE import_changes (
    id             INTEGER PRIMARY KEY,
    import_id      TEXT NOT NULL,
    memory_id      TEXT NOT NULL,
    action         TEXT NOT NULL,   -- 'created' or 'changed'
    before         TEXT,            -- the memory before its first change (JSON)
    vector         BLOB,
    history_cutoff INTEGER,         -- its last history row before the import
    UNIQUE (import_id, memory_id)
);
CREATE INDEX import_tasks_space ON import_tasks(tenant_id, space_id, created_at);
