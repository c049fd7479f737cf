"""A process killed (SIGKILL) while it ingests and compacts leaves a consistent DAG.

The child replays a LoCoMo conversation in batches, compacting after each at a
small budget (so it is compacting most of the time), and says how many
messages it has stored after each batch commits. The parent kills it at a
random moment, again and again; after each kill the DAG invariant holds, every
acknowledged message is there in order, and the next turn completes the work.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from context_helpers import locomo_turns

from memoryd.context import ContextConfig, ContextEngine
from memoryd.service import MemoryService

CHILD = r"""
import json, sys
from dataclasses import replace
from memoryd.context import ContextConfig, ContextEngine
from memoryd.service import MemoryService

svc = MemoryService(sys.argv[1])
config = replace(ContextConfig(), remember_turns=False, remember_summaries=False)
engine = ContextEngine(svc, config)
turns = json.loads(sys.stdin.readline())
print("ready", flush=True)
for start in range(int(sys.argv[2]), len(turns), 10):
    engine.ingest_batch("kill", turns[start : start + 10])
    print(min(start + 10, len(turns)), flush=True)
    engine.after_turn("kill", 600)
print("done", flush=True)
"""
QUIET = replace(ContextConfig(), remember_turns=False, remember_summaries=False)
ROUNDS = 6


def test_kill_during_compaction_leaves_a_consistent_dag(home: Path) -> None:
    turns = locomo_turns(360)
    rng = random.Random(17)
    stored = 0
    with MemoryService(home) as svc:
        engine = ContextEngine(svc, QUIET)
        for _ in range(ROUNDS):
            child = subprocess.Popen(
                [sys.executable, "-c", CHILD, str(home), str(stored)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
            )
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(json.dumps(turns) + "\n")
            child.stdin.flush()
            assert child.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.1, 0.8))
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
            acknowledged = [int(x) for x in child.stdout.read().split() if x.isdigit()]
            stored = max([stored, *acknowledged])
            assert engine.check("kill") == []
            info = engine.conversation("kill")
            assert info["messages"] >= stored  # nothing acknowledged is lost
            stored = info["messages"]
            engine.after_turn("kill", 600)  # the next turn finishes the work
            assert engine.check("kill") == []
            assert engine.assemble("kill", 600).estimated_tokens <= 600
        summaries = [
            i for i in engine.conversation("kill")["context_items"] if i["kind"] == "summary"
        ]
        assert summaries
        expanded = [
            m["content"]
            for item in summaries
            for m in engine.expand("kill", summary_id=item["id"])["messages"]
        ]
        assert expanded == [t["content"] for t in turns[: len(expanded)]]
