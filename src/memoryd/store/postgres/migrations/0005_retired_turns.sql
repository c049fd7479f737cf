-- memoryd on PostgreSQL, v5: a raw turn whose fact was superseded is no longer current.
--
-- As the SQLite migration 0022: the turn is retired as its fact is (invalidated_at),
-- so search, the profile and every injection leave it out, while the transcript,
-- history and as_of keep it. Turns retired before this version take the time they
-- were last changed.
UPDATE memories SET invalidated_at = updated_at
WHERE memory_type = 'session' AND superseded_by IS NOT NULL AND invalidated_at IS NULL;
