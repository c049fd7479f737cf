"""Continuity: checkpoint save and restore latency, and consolidation of a long session.

``python -m bench continuity`` saves a checkpoint after every turn of a
scripted session (each save also records the session's raw messages and
rebuilds its exchange summary, as the hooks do), renders the restore block,
and condenses the session offline (D5 → D2 → D1 → D0, the gist stored as a
memory, which embeds it). One process, a fresh home, the bundled model.
"""

from __future__ import annotations

import tempfile
import time
from typing import Any

import numpy as np

from bench.common import bench_embedder
from memoryd.continuity import Continuity, Owner
from memoryd.continuity.layers import SessionLayers
from memoryd.service import MemoryService

TOPICS = ["billing VAT lookup", "invoice rounding", "deploy pipeline", "CSV export", "auth tokens"]


def _ms(samples: list[float]) -> dict[str, float]:
    p50, p95, p99 = np.percentile(np.asarray(samples) * 1000, [50, 95, 99])
    return {"p50": round(float(p50), 2), "p95": round(float(p95), 2), "p99": round(float(p99), 2)}


def run(turns: int = 200) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as home:
        service = MemoryService(home, embedder=bench_embedder())
        try:
            continuity = Continuity(service, llm=None)
            owner = Owner("bench-agent", "bench-session", "/bench/repo")
            saves: list[float] = []
            for i in range(turns):
                topic = TOPICS[i * len(TOPICS) // turns]
                events: list[dict[str, Any]] = [
                    {"role": "user", "content": f"Turn {i}: continue with the {topic}. " * 4},
                    {
                        "tool": "Edit",
                        "arguments": {"file_path": f"src/{i % 30}.py"},
                        "success": True,
                    },
                    {"role": "assistant", "content": f"Done: {topic}, step {i}. " * 6},
                ]
                start = time.perf_counter()
                continuity.save(owner, events, trigger="agent_end")
                saves.append(time.perf_counter() - start)
            restores: list[float] = []
            for _ in range(50):
                start = time.perf_counter()
                text = continuity.restore("bench-agent", "/bench/repo")
                restores.append(time.perf_counter() - start)
            _ = service.embedder  # the model loads before the consolidation is timed
            start = time.perf_counter()
            SessionLayers(service, llm=None).consolidate("bench-agent", "bench-session")
            consolidation = time.perf_counter() - start
        finally:
            service.close()
    return {
        "benchmark": "continuity",
        "turns": turns,
        "save_ms": _ms(saves),
        "restore_ms": _ms(restores),
        "restore_chars": len(text),
        "consolidation_s": round(consolidation, 3),
    }
