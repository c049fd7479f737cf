-- memoryd schema v23: the embedding cache keeps its vectors on its own pages.
--
-- It was a WITHOUT ROWID table, whose rows SQLite stores like index entries: at
-- most about 1 KB of a row on its b-tree page, the rest on an overflow page of its
-- own. A 384-dimension vector is 1,536 bytes, so every cached vector took a whole
-- 4 KB overflow page, about 3.4 KB of it empty: more than half of a home's file.
-- As an ordinary table with a unique index on its key, two vectors share a page.
CREATE TABLE embed_cache_v23 (
    model  TEXT NOT NULL,
    hash   BLOB NOT NULL,
    vector BLOB NOT NULL
);
INSERT INTO embed_cache_v23(model, hash, vector) SELECT model, hash, vector FROM embed_cache;
DROP TABLE embed_cache;
ALTER TABLE embed_cache_v23 RENAME TO embed_cache;
CREATE UNIQUE INDEX embed_cache_key ON embed_cache(model, hash);
