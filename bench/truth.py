"""Life stories through every door: does each door give the user's current fact, and no stale one?

A scenario (``bench/data/truth/*.json``) is a short life story of one user:
what they said, in the order it reached memoryd, each with the date it was
said, then one or more checks: a question, the values that are true now
(``current``: every one must be given) and the values that are not
(``stale``: replaced, only planned, or another person's). The data's two
halves share no scenario: ``tune.json`` for tuning, ``confirm.json``
(written apart from the rule code) for confirming.

Each scenario is replayed through the doors a user touches, with no LLM:

* ``ingest``: every statement through smart ingest as a turn of its own
  session, then the question searched (raw turns included);
* ``add``: every statement as a direct add, dated, then searched;
* ``profile``: ``Memory.profile()`` after the ingest;
* ``hook``: the Claude Code SessionStart block after the ingest;
* ``proxy``: the memory proxy's recall block for the question;
* ``consolidate``: a consolidation after the ingest, then searched;
* ``import``: the statements as one ChatGPT export (``create_time`` each),
  imported through the file import, then searched.

A search door passes a check when its top hit holds a current value, every
current value is within the top 3, and no stale memory is in the top 3. A
block door (profile, hook, proxy) passes when every current value is in the
block and no line of it is stale. A memory or line is stale when it holds a
stale value and no current value, unless it names one of the scenario's
other people (their own fact, stored as theirs, is not a wrong answer).
"""

from __future__ import annotations

import json
import re
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import SMART_TASK_TIMEOUT_S, run_all
from memoryd.embed import Embedder
from memoryd.hooks import session_start
from memoryd.hooks.backend import EmbeddedBackend
from memoryd.hooks.config import HookConfig
from memoryd.proxy.recall import recall_block
from memoryd.proxy.settings import MemorySettings
from memoryd.sdk import Memory

DATA = Path(__file__).resolve().parent / "data" / "truth"
HALVES = ("tune", "confirm")
DOORS = ("ingest", "add", "profile", "hook", "proxy", "consolidate", "import")
SEARCH_LIMIT = 10
TOP = 3


def load(path: Path) -> list[dict[str, Any]]:
    """The scenarios of one file, or of every ``*.json`` of a folder, each with its half."""
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    out: list[dict[str, Any]] = []
    for file in files:
        with file.open(encoding="utf-8") as fh:
            doc = json.load(fh)
        out += [{**s, "half": doc.get("half", file.stem)} for s in doc["scenarios"]]
    return out


def _said_at(step: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(step["at"]).replace(tzinfo=UTC)


# ---------------------------------------------------------------- judging
def _holds(text: str, values: Iterable[str]) -> bool:
    """A value is in the text: as a word where it is one ("Rust" is not in "trust")."""
    return any(_value(v).search(text) for v in values)


def _value(value: str) -> re.Pattern[str]:
    """A value as a word where it is one, its English plural included ("coffees")."""
    edge = r"(?<![A-Za-z])" if value[:1].isascii() and value[:1].isalpha() else ""
    end = r"(?:e?s)?(?![A-Za-z])" if value[-1:].isascii() and value[-1:].isalpha() else ""
    return re.compile(edge + re.escape(value) + end, re.IGNORECASE)


def stale(text: str, check: dict[str, Any], others: list[str]) -> bool:
    """A stale value with no current one, and not said of another person."""
    return (
        _holds(text, check["stale"])
        and not _holds(text, check["current"])
        and not _holds(text, others)
    )


def judge_ranked(texts: list[str], check: dict[str, Any], others: list[str]) -> str | None:
    """None when a ranked list passes, else what went wrong."""
    if not texts:
        return "nothing found"
    top = texts[:TOP]
    if not _holds(texts[0], check["current"]):
        return f"top hit: {texts[0][:90]}"
    missing = [v for v in check["current"] if not any(_holds(t, [v]) for t in top)]
    if missing:
        return f"not in top {TOP}: {', '.join(missing)}"
    bad = [t for t in top if stale(t, check, others)]
    return f"stale in top {TOP}: {bad[0][:90]}" if bad else None


def judge_block(block: str, check: dict[str, Any], others: list[str]) -> str | None:
    """None when an injected block passes, else what went wrong."""
    missing = [v for v in check["current"] if not _holds(block, [v])]
    if missing:
        return f"missing: {', '.join(missing)}"
    bad = [line for line in block.splitlines() if stale(line, check, others)]
    return f"stale line: {bad[0][:90]}" if bad else None


# ---------------------------------------------------------------- doors
def _ingest(mem: Memory, scenario: dict[str, Any]) -> None:
    for number, step in enumerate(scenario["steps"]):
        result = mem.ingest(
            [{"role": "user", "content": step["say"]}],
            session_id=f"{scenario['id']}-{number}",
            dates=_said_at(step),
            mode="smart",
        )
        if result.task_id:
            mem.service.wait_for_task(result.task_id, timeout_s=SMART_TASK_TIMEOUT_S)


def _searched(mem: Memory, check: dict[str, Any]) -> list[str]:
    return [h.memory.content for h in mem.search(check["ask"], limit=SEARCH_LIMIT, touch=False)]


def _hook_block(mem: Memory) -> str:
    result = session_start.run({"source": "startup"}, EmbeddedBackend(mem), HookConfig())
    output = result.output or {}
    return str(output.get("hookSpecificOutput", {}).get("additionalContext", ""))


def _profile_block(mem: Memory) -> str:
    profile = mem.profile()
    return "\n".join(profile["static_facts"] + profile["dynamic_context"])


def _chatgpt_export(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    conversations = []
    for number, step in enumerate(scenario["steps"]):
        when = _said_at(step).timestamp()
        conversations.append(
            {
                "title": f"{scenario['id']} {number}",
                "create_time": when,
                "current_node": "u",
                "mapping": {
                    "u": {
                        "id": "u",
                        "parent": None,
                        "message": {
                            "author": {"role": "user"},
                            "create_time": when,
                            "content": {"content_type": "text", "parts": [step["say"]]},
                        },
                    }
                },
            }
        )
    return conversations


Judged = dict[str, str | None]


def _after_ingest(mem: Memory, scenario: dict[str, Any]) -> Judged:
    others = scenario.get("others", [])
    checks = scenario["checks"]
    _ingest(mem, scenario)
    out: Judged = {}
    out["ingest"] = _searched_right(mem, scenario)
    out["profile"] = _first(judge_block(_profile_block(mem), c, others) for c in checks)
    hook = _hook_block(mem)
    out["hook"] = _first(judge_block(hook, c, others) for c in checks)
    settings = MemorySettings()
    out["proxy"] = _first(
        judge_block(recall_block(mem.service, settings, [("user", c["ask"])]), c, others)
        for c in checks
    )
    mem.consolidate(wait=True, timeout_s=SMART_TASK_TIMEOUT_S)
    out["consolidate"] = _searched_right(mem, scenario)
    return out


def _after_add(mem: Memory, scenario: dict[str, Any]) -> Judged:
    for step in scenario["steps"]:
        mem.add(step["say"], valid_from=_said_at(step))
    return {"add": _searched_right(mem, scenario)}


def _after_import(mem: Memory, scenario: dict[str, Any], folder: Path) -> Judged:
    export = folder / "conversations.json"
    export.write_text(json.dumps(_chatgpt_export(scenario)), encoding="utf-8")
    task = mem.import_file(export)
    mem.wait_for_import(task["id"], timeout_s=SMART_TASK_TIMEOUT_S)
    return {"import": _searched_right(mem, scenario)}


def _searched_right(mem: Memory, scenario: dict[str, Any]) -> str | None:
    """A search door's verdict: each check's question searched and its ranking judged."""
    others = scenario.get("others", [])
    return _first(judge_ranked(_searched(mem, c), c, others) for c in scenario["checks"])


def _first(verdicts: Iterable[str | None]) -> str | None:
    return next((v for v in verdicts if v is not None), None)


def _in_home(embedder: Embedder | None, run: Callable[[Memory, Path], Judged]) -> Judged:
    with tempfile.TemporaryDirectory(prefix="memoryd-truth-") as home:
        mem = Memory(home, embedder=embedder)
        try:
            return run(mem, Path(home))
        finally:
            mem.close()


def run_scenario(scenario: dict[str, Any], embedder: Embedder | None) -> list[dict[str, Any]]:
    """One scenario through every door: a row per door, ``failure`` None where it passed."""
    verdicts: Judged = {}
    verdicts |= _in_home(embedder, lambda mem, _: _after_ingest(mem, scenario))
    verdicts |= _in_home(embedder, lambda mem, _: _after_add(mem, scenario))
    verdicts |= _in_home(embedder, lambda mem, home: _after_import(mem, scenario, home))
    return [
        {
            "scenario": scenario["id"],
            "half": scenario["half"],
            "lang": scenario["lang"],
            "kinds": scenario["kinds"],
            "door": door,
            "failure": verdicts[door],
        }
        for door in DOORS
    ]


def summarise(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """Share of scenarios passed: by half, then door, then language (and all)."""
    counts: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        for lang in (row["lang"], "all"):
            cell = counts[(row["half"], row["door"], lang)]
            cell[0] += row["failure"] is None
            cell[1] += 1
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (half, door, lang), (passed, total) in sorted(counts.items()):
        out.setdefault(half, {}).setdefault(door, {})[lang] = round(passed / total, 3)
    return out


def by_kind(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Share passed per kind of scenario, all doors together, per half."""
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        for kind in row["kinds"]:
            cell = counts[(row["half"], kind)]
            cell[0] += row["failure"] is None
            cell[1] += 1
    out: dict[str, dict[str, float]] = {}
    for (half, kind), (passed, total) in sorted(counts.items()):
        out.setdefault(half, {})[kind] = round(passed / total, 3)
    return out


def run(path: Path, half: str | None, embedder: Embedder | None, jobs: int = 1) -> dict[str, Any]:
    scenarios = [s for s in load(path) if half is None or s["half"] == half]
    rows, wall = run_all("life stories", scenarios, run_scenario, embedder, jobs)
    return {
        "benchmark": "truth",
        "scenarios": len(scenarios),
        "questions": sum(len(s["checks"]) for s in scenarios),
        "wall_s": round(wall, 1),
        "config": {"data": str(path), "half": half, "llm": None, "search_limit": SEARCH_LIMIT},
        "metrics": summarise(rows),
        "by_kind": by_kind(rows),
        "failures": [r for r in rows if r["failure"] is not None],
    }
