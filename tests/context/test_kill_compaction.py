"""A process killed (SIGKILL) in the middle of a compaction leaves the DAG as it was."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from conftest import locomo_turns

from memoryd.context import ContextConfig, ContextEngine
from memoryd.service import MemoryService

CHILD = r"""
import sys
from dataclasses import replace
from memoryd.context import ContextConfig, ContextEngine
from memoryd.service import MemoryService

svc = MemoryService(sys.argv[1])
config = replace(ContextConfig(), remember_turns=False, remember_summaries=False)
engine = ContextEngine(svc, config)
print("ready", flush=True)
while True:
    engine.compact(sys.argv[2])
"""
QUIET = replace(ContextConfig(), remember_turns=False, remember_summaries=False)
ROUNDS = 4


def test_kill_during_compaction_leaves_a_consistent_dag(home: Path) -> None:
    turns = locomo_turns(400)
    rng = random.Random(17)
    with MemoryService(home) as svc:
        engine = ContextEngine(svc, QUIET)
        for batch in range(ROUNDS):
            conversation = f"kill-{batch}"
            engine.ingest_batch(conversation, turns)
            child = subprocess.Popen(
                [sys.executable, "-c", CHILD, str(home), conversation],
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
            )
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.05, 0.6))
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
            assert engine.check(conversation) == []
            info = engine.conversation(conversation)
            assert info["messages"] == len(turns)
            engine.after_turn(conversation, 4000)  # the next turn finishes the work
            assert engine.check(conversation) == []
            assembled = engine.assemble(conversation, 4000)
            assert assembled.tokens <= 4000
            assert assembled.summaries >= 1
            expanded = [
                m["content"]
                for item in engine.conversation(conversation)["context_items"]
                if item["kind"] == "summary"
                for m in engine.expand(conversation, summary_id=item["id"])["messages"]
            ]
            assert expanded == [t["content"] for t in turns[: len(expanded)]]
