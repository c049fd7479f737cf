-- memoryd schema v7: bookkeeping apart from the user's tags, and turns embedded after the answer.
--
-- `marks` holds what memoryd itself needs to find a memory again (the slot a
-- distilled fact fills, its value, its polarity; a turn that is tool output).
-- They used to be tags, so every client showed them to the user and put them
-- into prompts; they move here, and `tags` is the caller's alone again.
ALTER TABLE memories ADD COLUMN marks TEXT NOT NULL DEFAULT '[]';
UPDATE memories SET
    marks = (SELECT json_group_array(j.value) FROM json_each(memories.tags) AS j
             WHERE j.value LIKE 'slot:%' OR j.value LIKE 'value:%' OR j.value = 'polarity:negative'),
    tags = (SELECT json_group_array(j.value) FROM json_each(memories.tags) AS j
            WHERE NOT (j.value LIKE 'slot:%' OR j.value LIKE 'value:%' OR j.value = 'polarity:negative'))
WHERE memory_type = 'insight' AND EXISTS (
    SELECT 1 FROM json_each(memories.tags) AS j
    WHERE j.value LIKE 'slot:%' OR j.value LIKE 'value:%' OR j.value = 'polarity:negative');

-- Conversation turns stored over the REST API are answered as soon as they are
-- durable and embedded afterwards: each waiting turn has a row here, written in
-- the same transaction as the turn, and removed with the vector's write. A
-- process that stops in between leaves the rows, and the next start embeds them.
CREATE TABLE pending_embeddings (
    memory_id TEXT PRIMARY KEY,
    space_id  TEXT NOT NULL,
    queued_at INTEGER NOT NULL
);

-- Turns sent without a session id are deduplicated by content over a window:
-- the same role and words from the same space, stored lately, are a repeat.
CREATE INDEX session_messages_hash ON session_messages(space_id, msg_hash, stored_at);
