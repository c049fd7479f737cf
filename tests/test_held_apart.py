"""The confirming parts of the development data are read by the reports alone.

A rule, a comment or a test that quotes a confirming question or sentence has
seen what it is checked on. This reads every confirming string (LoCoMo's
confirming conversations, LongMemEval's confirming questions, the first-week
set's, the life-story set's and the imported notes' confirming halves) and every file git tracks
outside the data files, and fails on any run of words they share that the
tuning parts do not also hold (a phrasing both parts use, such as a plain
question, is nobody's quote).
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from bench.splits import part_of

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
DATA = ROOT / "bench" / "data"
# words in a row that make a quote; Chinese is read a character a word, and a character
# says less than an English word ("现在开的是" is anyone's phrasing)
RUN = 6
RUN_CJK = 10
_CJK = re.compile(r"[\u3400-\u9fff]")
_TOKEN = re.compile(r"[\u3400-\u9fff]|[^\W_]+")


def runs(text: str, lengths: Iterable[int] = (RUN, RUN_CJK)) -> set[tuple[str, ...]]:
    words = _TOKEN.findall(text.casefold())
    return {tuple(words[i : i + n]) for n in lengths for i in range(len(words) - n + 1)}


def own_runs(text: str) -> set[tuple[str, ...]]:
    """The runs a string is quoted by: of its language's length."""
    words = _TOKEN.findall(text)
    cjk = sum(1 for w in words if _CJK.fullmatch(w))
    return runs(text, (RUN_CJK,) if cjk * 2 > len(words) else (RUN,))


def locomo() -> Iterator[tuple[str, str]]:
    path = SHARED / "locomo_dev.json"
    if not path.exists():
        return
    for sample in json.loads(path.read_text(encoding="utf-8")):
        part = part_of("locomo", sample["sample_id"])
        for qa in sample["qa"]:
            yield part or "tune", str(qa["question"])


def longmemeval() -> Iterator[tuple[str, str]]:
    path = SHARED / "longmemeval_s_dev.json.gz"
    if not path.exists():
        return
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for q in json.load(fh):
            yield part_of("longmemeval", q["question_id"]) or "tune", str(q["question"])


def first_week() -> Iterator[tuple[str, str]]:
    data = json.loads((DATA / "first_week.json").read_text(encoding="utf-8"))
    for c in data["conversations"]:
        part = "confirm" if c["half"] == "b" else "tune"
        for session in c["sessions"]:
            for role, text in session["turns"]:
                if role == "user":
                    yield part, text
        for q in c["questions"]:
            yield part, q["q"]


def truth() -> Iterator[tuple[str, str]]:
    for part in ("tune", "confirm"):
        data = json.loads((DATA / "truth" / f"{part}.json").read_text(encoding="utf-8"))
        for s in data["scenarios"]:
            for step in s["steps"]:
                yield part, step["say"]
            for check in s["checks"]:
                yield part, check["ask"]


def doc_categories() -> Iterator[tuple[str, str]]:
    for part in ("tune", "confirm"):
        data = json.loads((DATA / f"doc_categories_{part}.json").read_text(encoding="utf-8"))
        for doc in data["documents"]:
            yield part, doc["text"]


def quotable(strings: Iterable[tuple[str, str]]) -> dict[tuple[str, ...], str]:
    """Each run of words of a confirming string that no tuning string holds: its string."""
    confirming: dict[tuple[str, ...], str] = {}
    tuning: set[tuple[str, ...]] = set()
    for part, text in strings:
        if part == "confirm":
            found = own_runs(text)
            confirming.update(dict.fromkeys(found, text))
        else:
            tuning |= runs(text)
    return {r: text for r, text in confirming.items() if r not in tuning}


def tracked() -> list[Path]:
    names = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [ROOT / n for n in names if not n.startswith("bench/data/")]


@pytest.mark.parametrize(
    "source", [locomo, longmemeval, first_week, truth, doc_categories], ids=lambda f: f.__name__
)
def test_no_confirming_string_is_quoted_outside_the_data(source: object) -> None:
    assert callable(source)
    quotes = quotable(source())
    if source in (locomo, longmemeval) and not quotes:
        pytest.skip("the development data is not beside the checkout")
    assert quotes  # the set has a confirming part to keep apart
    found = []
    for path in tracked():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # a binary file, or one deleted in the working tree
        for shared in runs(text) & quotes.keys():
            found.append(f"{path.relative_to(ROOT)}: {quotes[shared]!r}")
    assert not found, "\n".join(sorted(set(found)))


def test_a_run_of_words_is_a_quote() -> None:
    """The check itself: a sentence quoted in a file is found, a shared phrasing is not."""
    quotes = quotable(
        [
            ("confirm", "The user moved from Quito to Tallinn after the spring term ended"),
            ("confirm", "where does the user live these days now"),
            ("tune", "where does the user live these days now"),
        ]
    )
    assert runs('# e.g. "moved from Quito to Tallinn after the spring term"') & quotes.keys()
    assert not runs("where does the user live these days now") & quotes.keys()
