-- A third full-text index over memories: the CJK bigrams of each row, so that
-- two-character Chinese and Japanese words match (the trigram index holds none
-- of them). SQLite's tokenizers read a CJK run as one token, so the grams are
-- cut by the application function cjk_bigrams() (registered on every memoryd
-- connection) and stored space-separated; rows without CJK text get no entry.
CREATE VIRTUAL TABLE memories_bi USING fts5(grams, tokenize='unicode61');
INSERT INTO memories_bi(rowid, grams)
    SELECT rowid, grams FROM (
        SELECT rowid, cjk_bigrams(content || ' ' || coalesce(l0_abstract, '')) AS grams
        FROM memories
    ) WHERE grams != '';
CREATE TRIGGER memories_bi_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_bi(rowid, grams)
        SELECT new.rowid, g FROM (
            SELECT cjk_bigrams(new.content || ' ' || coalesce(new.l0_abstract, '')) AS g
        ) WHERE g != '';
END;
CREATE TRIGGER memories_bi_ad AFTER DELETE ON memories BEGIN
    DELETE FROM memories_bi WHERE rowid = old.rowid;
END;
CREATE TRIGGER memories_bi_au AFTER UPDATE OF content, l0_abstract ON memories BEGIN
    DELETE FROM memories_bi WHERE rowid = old.rowid;
    INSERT INTO memories_bi(rowid, grams)
        SELECT new.rowid, g FROM (
            SELECT cjk_bigrams(new.content || ' ' || coalesce(new.l0_abstract, '')) AS g
        ) WHERE g != '';
END;
