"""The background job of layered session memory: consolidate resting sessions, apply retention.

``memoryd serve`` runs it at start (finishing what a stopped server left
half done) and then every ``session_consolidate_interval_min`` minutes,
for every active tenant; the Claude Code hooks run one pass in a detached
process when a session ends, on an embedded home.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from memoryd.continuity.layers import SessionLayers
from memoryd.periodic import Periodic

if TYPE_CHECKING:
    from memoryd.service import MemoryService

log = logging.getLogger(__name__)

# a session quiet this long is condensed; one still running waits (it would be redone)
IDLE_S = 30 * 60


def run_pass(svc: MemoryService, idle_s: float = IDLE_S) -> dict[str, int]:
    """One pass over every active tenant: sessions consolidated, rows expired."""
    consolidated = 0
    for tenant_id in svc.store.active_tenant_ids():
        try:
            consolidated += SessionLayers(svc.for_tenant(tenant_id)).consolidate_pending(idle_s)
        except Exception:  # one tenant's failure must not stop the others' (logged)
            log.exception("session consolidation of tenant %s failed", tenant_id)
    expired = SessionLayers(svc, llm=None).retain()
    if consolidated or expired:
        log.info("sessions: %d consolidated, %d expired layer rows removed", consolidated, expired)
    return {"consolidated": consolidated, "expired": expired}


class SessionWorker(Periodic):
    """``run_pass`` at start (finishing what a stopped server left), then every ``interval_s``."""

    name = "memoryd-sessions"
    at_start = True

    def __init__(self, svc: MemoryService, interval_s: float) -> None:
        self.svc = svc
        super().__init__(interval_s, svc.store.take_turn)

    def run_once(self) -> dict[str, int]:
        return run_pass(self.svc)
