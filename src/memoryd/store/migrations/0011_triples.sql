-- memoryd schema: knowledge-graph triples (subject, predicate, object) extracted at ingest.
--
-- Recall adds a triple whose entities a query names when no recalled memory already
-- says it. Lower-cased keys make the lookup by entity an index scan.
CREATE TABLE kg_triples (
    rowid       INTEGER PRIMARY KEY,
    tenant_id   TEXT NOT NULL,
    subject     TEXT NOT NULL,
    predicate   TEXT NOT NULL,
    object      TEXT NOT NULL,
    subject_key TEXT NOT NULL,
    object_key  TEXT NOT NULL,
    source      TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (tenant_id, subject_key, predicate, object_key)
);
CREATE INDEX kg_triples_subject ON kg_triples(tenant_id, subject_key);
CREATE INDEX kg_triples_object ON kg_triples(tenant_id, object_key);
