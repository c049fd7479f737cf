-- memoryd: session checkpoints, so an agent picks up where it left off after a reset.
--
-- One row per (tenant, agent, session): every save of a session replaces its
-- row in one write transaction, so a process killed while saving leaves the
-- previous checkpoint whole. ``project`` is the working directory the host
-- reported ('' when it has none); restore looks up the newest row of an agent
-- in a project. ``mechanical`` and ``summary`` are JSON documents
-- (memoryd.continuity.model); ``summary`` is NULL until one was made.
CREATE TABLE checkpoints (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    project TEXT NOT NULL DEFAULT '',
    trigger TEXT NOT NULL,
    saves INTEGER NOT NULL DEFAULT 1,
    mechanical TEXT NOT NULL,
    summary TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX checkpoints_session ON checkpoints(tenant_id, agent_id, session_id);
CREATE INDEX checkpoints_latest ON checkpoints(tenant_id, agent_id, project, updated_at);
CREATE INDEX checkpoints_recent ON checkpoints(tenant_id, updated_at);
