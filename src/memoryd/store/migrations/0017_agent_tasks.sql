-- memoryd: collaboration tasks of agents, the ``task/{task_id}`` scopes (seed 004).
--
-- A task belongs to a tenant (its id is the tenant's own name for it); its
-- members are agent ids of that tenant. A viewer sees the memories scoped
-- ``task/{id}`` of every task it is a member of (memoryd.store.scopes reads
-- agent_task_members in the filter of every query). Not the background job
-- queue (``tasks``): these are units of work agents share.
CREATE TABLE agent_tasks (
    tenant_id TEXT NOT NULL,
    id TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE TABLE agent_task_members (
    tenant_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    joined_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, task_id, agent_id)
);
CREATE INDEX agent_task_members_agent ON agent_task_members(tenant_id, agent_id);
