"""One source for every published figure: the reports, gathered and rendered.

``python -m bench report`` reads the reports the benchmark commands wrote
(``bench/reports/*.json``), keeps the figures the README and
``docs/results.md`` show in ``bench/results.json`` (committed, with the
commit each was measured at), and renders both from that file: the README's
table between its two markers, the results page whole. A report written at
another commit than HEAD, or from a tree with changes, is refused unless
told (``--any-commit``): a figure names the code it measured. Nothing else
writes these figures; ``tests/test_bench_report.py`` fails when the README
or the page differ from what the committed file renders.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results.json"
README = ROOT / "README.md"
PAGE = ROOT / "docs" / "results.md"
BEGIN = "<!-- bench report: begin (python -m bench report writes this table) -->"
END = "<!-- bench report: end -->"

Figures = dict[str, Any]


def _by_part(r: dict[str, Any], keys: tuple[str, ...]) -> Figures:
    """A retrieval report's ``keys`` over all its questions and over each part."""
    parts = r.get("parts", {})
    return {
        "questions": r["questions"],
        **{
            f"{part}:{k}": m[k] for part, m in [("all", r["metrics"]), *parts.items()] for k in keys
        },
        "part_questions": {part: m["n"] for part, m in parts.items()},
    }


def _locomo(r: dict[str, Any]) -> Figures:
    return {
        **_by_part(r, ("recall@5", "recall@10", "session_R@5_any")),
        **{f"{n}:recall@10": b["recall@10"] for n, b in r.get("baselines", {}).items()},
    }


def _longmemeval(r: dict[str, Any]) -> Figures:
    return _by_part(r, ("R@5_any", "R@5_all", "R@10_all", "NDCG@10"))


def _truth(r: dict[str, Any]) -> Figures:
    shares: Figures = {
        f"{half}:{door}:{lang}": share
        for half, doors in r["metrics"].items()
        for door, cells in doors.items()
        for lang, share in cells.items()
    }
    return {"scenarios": r["scenarios"], **shares}


def _speed(r: dict[str, Any]) -> Figures:
    keys = (
        "search_p50_ms",
        "search_p95_ms",
        "query_cache_hit_rate",
        "search_cached_p50_ms",
        "ingest_per_s",
        "direct_add_per_s",
    )
    return {f"{size}:{k}": row.get(k) for size, row in r["metrics"].items() for k in keys}


# report file -> the figures kept of it
SOURCES: dict[str, tuple[str, Callable[[dict[str, Any]], Figures]]] = {
    "locomo": ("locomo.json", _locomo),
    "longmemeval": ("longmemeval.json", _longmemeval),
    "truth": ("truth.json", _truth),
    "speed": ("speed.json", _speed),
}


class StaleReport(ValueError):
    """A report of another commit than HEAD, or of a tree with changes."""


def gather(reports: Path, head: str, any_commit: bool = False) -> dict[str, Any]:
    """The committed results, updated with every report found in ``reports``."""
    results: dict[str, Any] = load()
    for name, (file, figures) in SOURCES.items():
        path = reports / file
        if not path.exists():
            continue
        report = json.loads(path.read_text(encoding="utf-8"))
        commit = str(report.get("commit", "unknown"))
        if commit != head and not any_commit:
            raise StaleReport(
                f"{path} was written at {commit}, not at HEAD ({head}): run it again, "
                "or pass --any-commit to publish it as what it is"
            )
        results[name] = {
            "commit": commit,
            "cores": report.get("cores"),
            "wall_s": report.get("wall_s"),
            "figures": figures(report),
        }
    return results


def load() -> dict[str, Any]:
    if not RESULTS.exists():
        return {}
    found: dict[str, Any] = json.loads(RESULTS.read_text(encoding="utf-8"))
    return found


def _f(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _cell(value: Any) -> str:
    """A figure as a table cell: a mapping as its pairs ("tune 383, confirm 377")."""
    if isinstance(value, dict):
        return ", ".join(f"{k} {_f(v)}" for k, v in value.items())
    return _f(value)


def _rows(results: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(figure, tuning part, confirming part, all, commit), as the README shows them."""
    rows = []
    if "locomo" in results:
        lc, at = results["locomo"]["figures"], results["locomo"]["commit"]
        for key, label in (("recall@10", "turn recall@10"), ("session_R@5_any", "session R@5 any")):
            rows.append(
                (
                    f"LoCoMo dev, {label}",
                    _f(lc.get(f"tune:{key}")),
                    _f(lc.get(f"confirm:{key}")),
                    _f(lc[f"all:{key}"]),
                    at,
                )
            )
    if "longmemeval" in results:
        lme, at = results["longmemeval"]["figures"], results["longmemeval"]["commit"]
        for key in ("R@5_all", "NDCG@10"):
            rows.append(
                (
                    f"LongMemEval_S dev ({lme['questions']} questions), {key}",
                    _f(lme.get(f"tune:{key}")),
                    _f(lme.get(f"confirm:{key}")),
                    _f(lme[f"all:{key}"]),
                    at,
                )
            )
    if "truth" in results:
        tr, at = results["truth"]["figures"], results["truth"]["commit"]
        for lang, label in (("en", "English"), ("zh", "Chinese")):
            low = {
                half: min(v for k, v in tr.items() if k.startswith(f"{half}:") and k.endswith(lang))
                for half in ("tune", "confirm")
                if any(k.startswith(f"{half}:") for k in tr)
            }
            rows.append(
                (
                    f"Life stories ({tr.get('scenarios', '?')}), the current fact at the "
                    f"weakest door, {label}",
                    _f(low.get("tune")),
                    _f(low.get("confirm")),
                    "",
                    at,
                )
            )
    if "speed" in results:
        sp, at = results["speed"]["figures"], results["speed"]["commit"]
        for size in sorted({k.split(":")[0] for k in sp}, key=lambda s: int(s.split()[0])):
            p50, p95 = sp[f"{size}:search_p50_ms"], sp[f"{size}:search_p95_ms"]
            rows.append(
                (
                    f"search p50 / p95 at {int(size.split()[0]):,} memories, query embedded "
                    f"(cache hit rate {_f(sp[f'{size}:query_cache_hit_rate'], 2)})",
                    "",
                    "",
                    f"{_f(p50, 1)} / {_f(p95, 1)} ms",
                    at,
                )
            )
    return rows


def readme_table(results: dict[str, Any]) -> str:
    lines = [
        BEGIN,
        "| figure | tuning part | confirming part | all | commit |",
        "| --- | --- | --- | --- | --- |",
        *(f"| {' | '.join(row)} |" for row in _rows(results)),
        END,
    ]
    return "\n".join(lines)


def page(results: dict[str, Any]) -> str:
    """``docs/results.md``: every figure kept, by benchmark."""
    out = [
        "# Current results",
        "",
        "Written by `python -m bench report` from `bench/results.json`; do not edit by hand.",
        "Each benchmark's figures come from one report, at the commit named. How each is",
        "measured, and the experiments that led here, are in [benchmarks.md](benchmarks.md);",
        "the tuning and confirming parts are those of `bench/data/splits.json` and of the",
        "data sets' halves.",
    ]
    for name, entry in results.items():
        out += [
            "",
            f"## {name}",
            "",
            f"Commit `{entry['commit']}`, {entry.get('cores')} cores, {entry.get('wall_s')} s.",
            "",
            "| figure | value |",
            "| --- | --- |",
        ]
        out += [f"| `{k}` | {_cell(v)} |" for k, v in entry["figures"].items()]
    return "\n".join(out) + "\n"


def with_table(readme: str, table: str) -> str:
    """The README with its generated table replaced (the markers must be there)."""
    start, end = readme.index(BEGIN), readme.index(END) + len(END)
    return readme[:start] + table + readme[end:]


def render(results: dict[str, Any]) -> tuple[str, str]:
    """(the README as it should read, the results page)."""
    return with_table(README.read_text(encoding="utf-8"), readme_table(results)), page(results)


def publish(results: dict[str, Any]) -> None:
    RESULTS.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    readme, results_page = render(load())  # from the file, as the check renders it
    README.write_text(readme, encoding="utf-8")
    PAGE.write_text(results_page, encoding="utf-8")


def command(any_commit: bool = False, check: bool = False) -> int:
    """``python -m bench report``: 0 when published (or, with ``check``, up to date)."""
    from bench.cli import REPORTS, console

    if check:
        readme, results_page = render(load())
        stale = [
            str(p.relative_to(ROOT))
            for p, text in ((README, readme), (PAGE, results_page))
            if not p.exists() or p.read_text(encoding="utf-8") != text
        ]
        console.print("out of date: " + ", ".join(stale) if stale else "up to date", markup=False)
        return 1 if stale else 0
    head = _head()
    try:
        results = gather(REPORTS, head, any_commit)
    except StaleReport as exc:
        console.print(str(exc), markup=False)
        return 1
    publish(results)
    measured = ", ".join(f"{name} at {entry['commit']}" for name, entry in results.items())
    console.print(
        f"{RESULTS.relative_to(ROOT)}, README.md and docs/results.md written ({measured})",
        markup=False,
    )
    return 0


def _head() -> str:
    import subprocess

    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
