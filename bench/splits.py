"""The development data's tuning and confirming parts (``bench/data/splits.json``).

A rule tuned on some questions and checked on others of the same
conversations has seen what it is checked on: the parts share no
conversation (LoCoMo, split by conversation) and no question (LongMemEval,
each question with its own haystack). Tune on ``tune`` alone (``--part
tune``); the reports give both parts side by side, and nothing but the
reports reads ``confirm``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

SPLITS = Path(__file__).resolve().parent / "data" / "splits.json"
PARTS = ("tune", "confirm")

T = TypeVar("T")


@cache
def _splits() -> dict[str, dict[str, frozenset[str]]]:
    data: dict[str, Any] = json.loads(SPLITS.read_text(encoding="utf-8"))
    return {
        name: {part: frozenset(data[name][part]) for part in PARTS}
        for name in data
        if isinstance(data[name], dict)
    }


def part_of(benchmark: str, key: str) -> str | None:
    """``tune`` or ``confirm``; ``None`` for an id the split does not name (data other
    than the development set: it has no parts)."""
    for part, keys in _splits()[benchmark].items():
        if key in keys:
            return part
    return None


def only(benchmark: str, items: Iterable[T], key: Callable[[T], str], part: str | None) -> list[T]:
    """The items of ``part`` (all of them when ``None``)."""
    if part is not None and part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}")
    chosen = [i for i in items if part is None or part_of(benchmark, key(i)) == part]
    if part is not None and not chosen:
        raise ValueError(f"no item of this file is in the {part} part ({SPLITS})")
    return chosen


def by_part(
    benchmark: str,
    rows: list[dict[str, Any]],
    field: str,
    aggregate: Callable[[list[dict[str, Any]]], dict[str, Any]],
) -> dict[str, dict[str, Any]]:
    """Each part's metrics over the rows it holds (a part a run left out is absent)."""
    out = {}
    for part in PARTS:
        mine = [r for r in rows if part_of(benchmark, str(r[field])) == part]
        if mine:
            out[part] = {"n": len(mine), **aggregate(mine)}
    return out
