-- memoryd: the marks of each memory, one row a mark, indexed.
--
-- Smart ingest and direct adds find the memories of a fact's slot by their
-- mark (``slot:…``): tested row by row in the JSON of ``memories.marks``,
-- that read every memory of the space (0.26 s a slot at 100,000 memories,
-- twice for each fact). ``memories.marks`` stays what is written and read;
-- the triggers keep this table in step with it, in the same transaction.
CREATE TABLE memory_marks (
    memory_rowid INTEGER NOT NULL,
    mark TEXT NOT NULL
);
INSERT INTO memory_marks(memory_rowid, mark)
    SELECT m.rowid, j.value FROM memories m, json_each(m.marks) AS j;
CREATE INDEX memory_marks_mark ON memory_marks(mark, memory_rowid);
CREATE INDEX memory_marks_memory ON memory_marks(memory_rowid);
CREATE TRIGGER memory_marks_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memory_marks(memory_rowid, mark)
        SELECT new.rowid, j.value FROM json_each(new.marks) AS j;
END;
CREATE TRIGGER memory_marks_update AFTER UPDATE OF marks ON memories BEGIN
    DELETE FROM memory_marks WHERE memory_rowid = old.rowid;
    INSERT INTO memory_marks(memory_rowid, mark)
        SELECT new.rowid, j.value FROM json_each(new.marks) AS j;
END;
CREATE TRIGGER memory_marks_delete AFTER DELETE ON memories BEGIN
    DELETE FROM memory_marks WHERE memory_rowid = old.rowid;
END;
