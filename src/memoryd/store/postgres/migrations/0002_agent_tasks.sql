-- memoryd on PostgreSQL: collaboration tasks of agents, the task/{task_id} scopes
-- (as the SQLite migration 0017_agent_tasks; see memoryd.store.agent_tasks).
CREATE TABLE agent_tasks (
    tenant_id TEXT NOT NULL,
    id TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE TABLE agent_task_members (
    tenant_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    joined_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, task_id, agent_id)
);
CREATE INDEX agent_task_members_agent ON agent_task_members(tenant_id, agent_id);
