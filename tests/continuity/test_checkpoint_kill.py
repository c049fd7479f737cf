"""A process killed while saving checkpoints leaves the last one whole and readable.

The child saves checkpoint after checkpoint of one session, each one's
messages, tool call and file numbered alike, and says which it saved; it
is killed (SIGKILL) at a random moment, several times over on one store.
What is read afterwards must be one save's checkpoint entire (every part
the same number) and no older than the last save the child reported.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memoryd.continuity import Continuity
from memoryd.service import MemoryService

pytestmark = pytest.mark.skipif(os.name == "nt", reason="SIGKILL")

CHILD = """
import sys
from memoryd.continuity import Continuity, Owner
from memoryd.service import MemoryService

service = MemoryService(sys.argv[1])
continuity = Continuity(service, llm=None)
owner = Owner("agent-k", "session-k", "/work/project")
n = int(sys.argv[2])
while True:
    n += 1
    continuity.save(owner, [
        {"role": "user", "content": f"save {n}: " + "x" * 2000},
        {"role": "assistant", "content": f"done {n}"},
        {"tool": "Write", "arguments": {"file_path": f"f{n}.py", "n": n}, "success": True},
    ], trigger="agent_end")
    print(n, flush=True)
"""
ROUNDS = 5


def number(text: str | None) -> int:
    assert text is not None
    return int(text.split()[1].rstrip(":"))


def test_a_kill_during_saves_leaves_the_previous_checkpoint_readable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    rng = random.Random(4)
    acknowledged = 0
    for _ in range(ROUNDS):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(home), str(acknowledged)],
            stdout=subprocess.PIPE,
            env=env,
        )
        assert child.stdout is not None
        for _ in range(3):  # let it get going, then kill it mid-flight at a random moment
            line = child.stdout.readline()
            assert line, "the child died before saving"
            acknowledged = int(line)
        time.sleep(rng.uniform(0.0, 0.05))
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        for line in child.stdout.read().split():
            acknowledged = int(line)
        child.stdout.close()

        with MemoryService(home) as service:
            continuity = Continuity(service, llm=None)
            (checkpoint,) = continuity.list(agent_id="agent-k")
            m = checkpoint.mechanical
            n = number(m.last_user_message)
            assert n >= acknowledged
            assert number(m.last_assistant_message) == n
            assert m.recent_tools[-1].arguments["n"] == n
            assert m.modified_files[-1] == f"f{n}.py"
            assert checkpoint.saves == n  # every save before it is counted, none twice
            assert "Modified files:" in continuity.restore("agent-k", "/work/project")
        acknowledged = n
    assert acknowledged > 3 * ROUNDS
