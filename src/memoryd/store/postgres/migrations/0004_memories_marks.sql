-- memoryd: a memory found by its marks (a fact's slot, for smart ingest and
-- direct adds), as by its tags: the containment test ``marks @> '["…"]'``
-- served by a GIN index instead of read row by row (see the SQLite
-- migration 0020_memory_marks).
CREATE INDEX memories_marks ON memories USING gin (marks jsonb_path_ops);
