"""The stats of reference §4.12–4.13: counts, tags, decay, relations, spaces, sharing, agents.

Every figure is over the spaces the caller belongs to (a named space is
checked for membership first: the upstream API reads any space it is told).
Deleted memories are not counted.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from datetime import UTC, datetime, time, timedelta
from typing import Any

from memoryd.errors import ValidationError
from memoryd.ingest import admission
from memoryd.models import (
    Category,
    MemberStatus,
    MemoryType,
    RelationType,
    State,
    Tier,
    format_ts,
    utcnow,
)
from memoryd.retrieve import DEFAULT_RECIPE
from memoryd.retrieve import decay as decay_stage
from memoryd.retrieve.config import SHARED_WEIGHT, SPACE_WEIGHTS, stage_names
from memoryd.store import MemoryFilter
from memoryd.store.aggregates import BREAKDOWN
from memoryd.store.rows import from_us, to_us
from memoryd.tenancy.scope import TenantScope
from memoryd.tenancy.spaces import MAX_MEMBERS_PER_TEAM, MAX_SPACES_PER_USER
from memoryd.validate import check_id

MAX_DAYS = 3650
MAX_NODES = 10_000
TOP_CATEGORIES = 5


class Stats(TenantScope):
    """The tenant's figures, as its owner or as one of its agents (``viewer``): an agent's
    count, list and graph only the memories it may see (global, its tasks, its own scope
    and session), as its searches do. Sharing events are every agent's: what a space
    holds is a global copy."""

    def _spaces(self, space: str | None) -> list[str]:
        return [ref.space_id for ref in self.space_refs(space)]

    # ------------------------------------------------------------------ GET /v1/stats
    def overview(self, space: str | None = None, days: int = 30) -> dict[str, Any]:
        if not 1 <= days <= MAX_DAYS:
            raise ValidationError(f"days must be between 1 and {MAX_DAYS}")
        spaces = self._spaces(space)
        since = datetime.combine((utcnow() - timedelta(days=days - 1)).date(), time(), UTC)
        timeline: dict[str, dict[str, int]] = defaultdict(dict)
        for day, kind, n in self.store.daily_counts(
            self.me, spaces, to_us(since) or 0, viewer=self.viewer
        ):
            timeline[day][kind] = n
        categories: dict[str, dict[str, int]] = defaultdict(dict)
        for day, category, n in self.store.daily_counts(
            self.me, spaces, to_us(since) or 0, by="category", viewer=self.viewer
        ):
            categories[day][category] = n
        counts, averages = _overview_counts(self.store.breakdown(self.me, spaces, self.viewer))
        return {
            **counts,
            "timeline": [
                {
                    "date": day,
                    "count": sum(kinds.values()),
                    "by_type": kinds,
                    "by_category": categories[day],
                }
                for day, kinds in timeline.items()
            ],
            **averages,
        }

    # ------------------------------------------------------------------ /v1/stats/config
    @staticmethod
    def config() -> dict[str, Any]:
        r = DEFAULT_RECIPE
        return {
            "decay": {
                "half_life_days": decay_stage.HALF_LIFE_DAYS,
                "importance_modulation": decay_stage.IMPORTANCE_MODULATION,
                "recency_weight": decay_stage.RECENCY_WEIGHT,
                "frequency_weight": decay_stage.FREQUENCY_WEIGHT,
                "intrinsic_weight": decay_stage.INTRINSIC_WEIGHT,
                "tiers": {
                    t.value: {"beta": decay_stage.BETA[t], "floor": decay_stage.FLOOR[t]}
                    for t in Tier
                },
            },
            # memoryd does not move memories between tiers on its own (yet)
            "promotion": None,
            "demotion": None,
            "retrieval": {
                "stages": stage_names(r),
                "default_min_score": r.min_score,
                "fusion": r.fusion,
                "rrf_k": r.rrf_k,
                "vector_weight": r.vector_weight,
                "bm25_weight": r.bm25_weight,
            },
            "admission": {
                "presets": {
                    name: {"reject": p.reject, "admit": p.admit}
                    for name, p in admission.PRESETS.items()
                },
                "default_preset": admission.DEFAULT_PRESET,
                "weights": {
                    "utility": admission.W_UTILITY,
                    "confidence": admission.W_CONFIDENCE,
                    "novelty": admission.W_NOVELTY,
                    "recency": admission.W_RECENCY,
                    "type_prior": admission.W_TYPE_PRIOR,
                },
                "category_priors": {c.value: v for c, v in admission.CATEGORY_PRIORS.items()},
                "gray_zone_min_novelty": admission.GRAY_ZONE_MIN_NOVELTY,
            },
            "spaces": {
                "search_weights": {k.value: v for k, v in SPACE_WEIGHTS.items()},
                "shared_by_others_weight": SHARED_WEIGHT,
                "max_spaces_per_user": MAX_SPACES_PER_USER,
                "max_members_per_team": MAX_MEMBERS_PER_TEAM,
            },
            "categories": [c.value for c in Category],
            "tiers": [t.value for t in Tier],
            "memory_types": [t.value for t in MemoryType],
            "states": [s.value for s in State],
            "relation_types": [t.value for t in RelationType],
        }

    # ------------------------------------------------------------------ /v1/stats/tags
    def tags(self, limit: int = 20, min_count: int = 1, space: str | None = None) -> dict[str, Any]:
        counts = self.store.tag_counts(self.me, self._spaces(space), self.viewer)
        return {
            "tags": [{"name": tag, "count": n} for tag, n, _ in counts if n >= min_count][
                : max(limit, 0)
            ],
            "total_unique_tags": len(counts),
            "total_tag_usages": sum(n for _, n, _ in counts),
            "cross_space_tags": sorted(tag for tag, _, spaces in counts if spaces > 1),
        }

    # ------------------------------------------------------------------ /v1/stats/decay
    def decay(self, memory_id: str, points: int = 90) -> dict[str, Any]:
        if not 1 <= points <= 3650:
            raise ValidationError("points must be between 1 and 3650")
        m = self.get(check_id(memory_id))
        now = utcnow()
        beta = decay_stage.BETA[m.tier]
        lam = math.log(2) / (
            decay_stage.HALF_LIFE_DAYS * math.exp(decay_stage.IMPORTANCE_MODULATION * m.importance)
        )
        curve = [
            {"day": d, "strength": round(decay_stage.composite(m, now + timedelta(days=d)), 6)}
            for d in range(points)
        ]
        last = m.last_accessed_at
        return {
            "memory_id": m.id,
            "tier": m.tier.value,
            "importance": m.importance,
            "confidence": m.confidence,
            "access_count": m.access_count,
            "last_accessed_hours_ago": None
            if last is None
            else round((now - last).total_seconds() / 3600, 3),
            "current_strength": round(decay_stage.recency(m, now), 6),
            "composite_score": round(decay_stage.composite(m, now), 6),
            "decay_params": {
                "beta": beta,
                "half_life_days": decay_stage.HALF_LIFE_DAYS,
                "lambda": lam,
                "floor": decay_stage.FLOOR[m.tier],
                "importance_modulation": decay_stage.IMPORTANCE_MODULATION,
            },
            "decay_curve": curve,
            "promotion_thresholds": None,
            "demotion_thresholds": None,
        }

    # ------------------------------------------------------------------ /v1/stats/relations
    def relations(self, limit: int = 100, min_importance: float = 0.0) -> dict[str, Any]:
        if not 0 <= limit <= MAX_NODES:
            raise ValidationError(f"limit must be between 0 and {MAX_NODES}")
        memories = [
            m
            for m in self.store.list_memories(
                self.me,
                self._spaces(None),
                MemoryFilter(exclude_types=(MemoryType.SESSION,), viewer=self.viewer),
                sort="importance",
                limit=limit,
            )[0]
            if m.importance >= min_importance
        ]
        by_id = {m.id: m for m in memories}
        edges = [
            {
                "source": m.id,
                "target": r.target_id,
                "relation_type": r.relation_type.value,
                "context_label": r.context_label,
                "cross_space": r.target_id in by_id and by_id[r.target_id].space_id != m.space_id,
            }
            for m in memories
            for r in m.relations
            if r.target_id in by_id
        ]
        nodes = [
            {
                "id": m.id,
                "label": (m.l0_abstract or m.content)[:80],
                "category": m.category.value,
                "tier": m.tier.value,
                "importance": m.importance,
                "access_count": m.access_count,
                "memory_type": m.memory_type.value,
                "space_id": m.space_id,
            }
            for m in memories
        ]
        return {
            "nodes": nodes,
            "edges": edges,
            "total_nodes": len(nodes),
            "total_edges": len(edges),
        }

    # ------------------------------------------------------------------ /v1/stats/spaces
    def spaces(self) -> dict[str, Any]:
        out = []
        for space in self.store.spaces_of(self.me):
            scope = [space.id]
            totals = self.store.totals(self.me, scope, self.viewer)
            agents = self.store.count_by(self.me, scope, "owner_agent_id", viewer=self.viewer)
            last = totals["last_updated_us"]
            out.append(
                {
                    "space_id": space.id,
                    "space_type": space.space_type.value,
                    "name": space.name,
                    "owner_id": space.owner_id,
                    "memory_count": totals["total"],
                    "agent_count": len([a for a in agents if a]),
                    "tier_distribution": self.store.count_by(
                        self.me, scope, "tier", viewer=self.viewer
                    ),
                    "top_categories": [
                        {"category": c, "count": n}
                        for c, n in list(
                            self.store.count_by(
                                self.me, scope, "category", viewer=self.viewer
                            ).items()
                        )[:TOP_CATEGORIES]
                    ],
                    "last_activity": format_ts(
                        space.updated_at if last is None else max(from_us(last), space.updated_at)
                    ),
                    "shared_in_count": self.store.shared_in(self.me, scope, self.viewer),
                    "member_count": sum(m.status is MemberStatus.ACTIVE for m in space.members),
                    "members": [
                        {"user_id": m.user_id, "role": m.role.value, "status": m.status.value}
                        for m in space.members
                    ],
                }
            )
        return {"spaces": out, "total_spaces": len(out)}

    # ------------------------------------------------------------------ /v1/stats/sharing
    def sharing(self, days: int = 30) -> dict[str, Any]:
        if not 1 <= days <= MAX_DAYS:
            raise ValidationError(f"days must be between 1 and {MAX_DAYS}")
        since = to_us(utcnow() - timedelta(days=days)) or 0
        keys = (
            "id",
            "action",
            "memory_id",
            "from_space",
            "to_space",
            "user_id",
            "agent_id",
            "content_preview",
        )
        events = []
        # every agent sees them: a shared copy is global, every member's (tenancy/sharing.py)
        for row in self.store.sharing_events(self.me, self.readable_spaces(), since):
            event = dict(zip(keys, row[:8], strict=True))
            event["timestamp"] = format_ts(from_us(row[8]))
            events.append(event)
        actions = Counter(e["action"] for e in events)
        flows = Counter((e["from_space"], e["to_space"]) for e in events)
        per_day: dict[str, Counter[str]] = defaultdict(Counter)
        for e in events:
            per_day[e["timestamp"][:10]][e["action"]] += 1
        return {
            "summary": {
                "total_shares": actions["share"] + actions["auto_share"] + actions["reshare"],
                "total_pulls": actions["pull"],
                "total_unshares": actions["unshare"],
                "unique_sharers": len({e["user_id"] for e in events}),
            },
            "recent_activity": events[:50],
            "flow_graph": {
                "nodes": sorted({s for pair in flows for s in pair}),
                "edges": [{"from": a, "to": b, "count": n} for (a, b), n in flows.items()],
            },
            "timeline": [
                {
                    "date": d,
                    "shares": c["share"] + c["auto_share"] + c["reshare"],
                    "pulls": c["pull"],
                }
                for d, c in sorted(per_day.items(), reverse=True)
            ],
        }

    # ------------------------------------------------------------------ /v1/stats/agents
    def agents(self) -> dict[str, Any]:
        per_agent: dict[str, dict[str, Any]] = {}
        for agent, space, category, n, last, shared in self.store.agent_counts(
            self.me, self._spaces(None), self.viewer
        ):
            row = per_agent.setdefault(
                agent,
                {"spaces": Counter(), "categories": Counter(), "last": 0, "shared": 0},
            )
            row["spaces"][space] += n
            row["categories"][category] += n
            row["last"] = max(row["last"], last)
            row["shared"] += shared
        agents = [
            {
                "agent_id": agent,
                "total_memories": sum(row["spaces"].values()),
                "memories_by_space": dict(row["spaces"]),
                "top_categories": [
                    {"category": c, "count": n}
                    for c, n in row["categories"].most_common(TOP_CATEGORIES)
                ],
                "last_active": format_ts(from_us(row["last"])),
                "share_count": row["shared"],
            }
            for agent, row in sorted(per_agent.items())
        ]
        return {"agents": agents, "total_agents": len(agents)}


# the overview's groups: its key, and the column of ``BREAKDOWN`` it counts by
OVERVIEW_GROUPS = {
    "by_type": "memory_type",
    "by_category": "category",
    "by_tier": "tier",
    "by_state": "state",
    "by_space": "space_id",
    "by_visibility": "visibility",
    "by_agent": "owner_agent_id",
}


def _overview_counts(
    rows: list[tuple[Any, ...]],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The overview's total and counts, and its averages, from the store's breakdown rows.

    Deleted memories count only in ``by_state`` (the one place a soft delete
    is visible); each group lists the most frequent value first.
    """
    width = len(BREAKDOWN)
    state = BREAKDOWN.index("state")
    live = [r for r in rows if r[state] != State.DELETED.value]
    total = sum(int(r[width]) for r in live)

    def counts(column: str, of: list[tuple[Any, ...]]) -> dict[str, int]:
        at = BREAKDOWN.index(column)
        found: Counter[str] = Counter()
        for row in of:
            found[str(row[at])] += int(row[width])
        return dict(sorted(found.items(), key=lambda item: (-item[1], item[0])))

    def average(at: int) -> float:
        return round(sum(float(r[at] or 0.0) for r in live) / total, 4) if total else 0.0

    grouped = {
        key: counts(column, rows if column == "state" else live)
        for key, column in OVERVIEW_GROUPS.items()
    }
    averages = {
        "avg_importance": average(width + 1),
        "avg_confidence": average(width + 2),
        "total_access_count": sum(int(r[width + 3] or 0) for r in live),
    }
    return {"total": total, **grouped}, averages
