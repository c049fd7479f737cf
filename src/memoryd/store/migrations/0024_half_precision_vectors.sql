-- memoryd schema v24: stored vectors in half precision.
--
-- A memory's vector was 4 bytes a number (1,536 for the bundled model's 384), the
-- largest part of its row. Two bytes a number move a cosine in the fourth decimal,
-- which no ranking notices, and the vector index's graph already holds them so.
-- Every stored vector is rewritten: the memories', the journal of imports that can be
-- rolled back, the learned noise. The embedding cache reads either width.
UPDATE memories SET vector = memoryd_half_precision(vector) WHERE vector IS NOT NULL;
UPDATE import_changes SET vector = memoryd_half_precision(vector) WHERE vector IS NOT NULL;
UPDATE learned_noise SET vector = memoryd_half_precision(vector);
