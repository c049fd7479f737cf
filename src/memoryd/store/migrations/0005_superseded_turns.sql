-- memoryd schema v5: the raw turns whose fact was superseded, found again quickly.
--
-- Raw turns that said a value since replaced point at the memory that replaced it
-- (superseded_by); a later change re-points them, finding them by this index.
CREATE INDEX memories_superseded_by ON memories(superseded_by) WHERE superseded_by IS NOT NULL;
