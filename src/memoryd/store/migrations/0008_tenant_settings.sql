-- memoryd schema: per-tenant settings, and metadata a client attaches to a memory.
--
-- tenant_settings holds one JSON document per (tenant, name): the memory proxy's
-- settings are the first ("memory": enabled, budget, retention, strategy, upstreams).
-- memory_metadata keeps the free-form metadata object of the OmniRoute-compatible
-- memory API beside the memory it describes, so what a client sent comes back.
CREATE TABLE IF NOT EXISTS tenant_settings (
    tenant_id  TEXT NOT NULL,
    name       TEXT NOT NULL,
    value      TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, name)
);
CREATE TABLE IF NOT EXISTS memory_metadata (
    memory_id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    value     TEXT NOT NULL
);
