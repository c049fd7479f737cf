-- memoryd schema v22: a raw turn whose fact was superseded is no longer current.
--
-- Such a turn pointed at the memory replacing its fact (superseded_by) but stayed
-- live, so search ranked it below the new value and injections still showed the
-- old one. It is now retired as the fact is (invalidated_at): search, the profile
-- and every injection leave it out, while the transcript, history and as_of keep
-- it. Turns retired before this version take the time they were last changed; a
-- new seq makes the vector index read them again.
UPDATE counters SET value = value + 1 WHERE name = 'seq';
UPDATE memories
SET invalidated_at = updated_at, seq = (SELECT value FROM counters WHERE name = 'seq')
WHERE memory_type = 'session' AND superseded_by IS NOT NULL AND invalidated_at IS NULL;
