-- memoryd: the memories deleted outright (an import rolled back), for the vector index.
--
-- An index catches up by the rows written after the last change counter it
-- saw (memories.seq); a deleted row is no longer there to be read. Each one
-- leaves its rowid here, with the counter of the deleting transaction (every
-- write bumps it first), so an index in any process, or one read back from its
-- saved rows, drops it.
CREATE TABLE deleted_memories (
    memory_rowid INTEGER NOT NULL,
    space_id TEXT NOT NULL,
    seq INTEGER NOT NULL
);
CREATE INDEX deleted_memories_space_seq ON deleted_memories(space_id, seq);
CREATE TRIGGER memories_deleted AFTER DELETE ON memories BEGIN
    INSERT INTO deleted_memories(memory_rowid, space_id, seq)
    VALUES (old.rowid, old.space_id, (SELECT value FROM counters WHERE name = 'seq'));
END;
