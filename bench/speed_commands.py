"""The speed and load commands of ``python -m bench``: speed, startup, import, server,
proxy, rerank, ingest-latency, export-rss, footprint, first-add, import-text."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bench.cli import REPORTS, DatabaseOption, app, check_ingest, console, database_url, publish
from memoryd.store.hnsw_index import DEFAULT_HNSW_THRESHOLD


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
    peers: Annotated[
        str, typer.Option(help="Comma-separated bare stores to run beside: chroma, sqlite-vec.")
    ] = "",
    out: Annotated[Path, typer.Option()] = REPORTS / "speed.json",
) -> None:
    """Ingest throughput, search latency p50/p95/p99, peak RSS and disk per size
    (on SQLite, and on PostgreSQL beside it with --database; the bare stores of --peers
    on the same rows)."""
    from bench import peers as bare_stores
    from bench import speed as sp

    sizes_n = [int(s) for s in sizes.split(",") if s.strip()]
    chosen = [p.strip() for p in peers.split(",") if p.strip()]
    unknown = sorted(set(chosen) - set(bare_stores.NAMES))
    if unknown:
        raise typer.BadParameter(
            f"unknown peer(s) {', '.join(unknown)}; known: {', '.join(bare_stores.NAMES)}"
        )
    report = sp.run(sizes_n, queries, embed_limit, hnsw_threshold, database_url(database), chosen)
    publish(report, out, sp.print_report)


@app.command()
def ops(
    size: Annotated[int, typer.Option(help="Memories in the store.")] = 100_000,
    repeats: Annotated[int, typer.Option(min=1, help="Runs of each operation.")] = 5,
    embed_limit: Annotated[
        int, typer.Option(help="Rows embedded by the model; past it, perturbed copies.")
    ] = 200_000,
    out: Annotated[Path, typer.Option()] = REPORTS / "ops.json",
) -> None:
    """One memory at a time on a large store: add, get, update, forget, list, ingest."""
    from bench import ops as op

    publish(op.run(size, repeats, embed_limit), out, op.print_report)


@app.command()
def startup(
    runs: Annotated[int, typer.Option(min=2, help="Processes per command.")] = 20,
    out: Annotated[Path, typer.Option()] = REPORTS / "startup.json",
) -> None:
    """Wall and CPU time of memoryd commands that do not embed, and of the prompt hook."""
    from bench import startup as st

    report = st.run(runs)
    publish(report, out, st.print_report)


@app.command("import-text")
def import_text(
    mb: Annotated[float, typer.Option(min=0.01, help="Megabytes of generated text.")] = 50.0,
    out: Annotated[Path, typer.Option()] = REPORTS / "import_text.json",
) -> None:
    """memoryd import-file of a generated text file: time, rate and peak memory."""
    from bench import import_text as it

    report = it.run(mb)
    publish(report, out, it.print_report)


@app.command("first-add")
def first_add(
    size: Annotated[int, typer.Option(help="Memories in the bulk-loaded store.")] = 100_000,
    out: Annotated[Path, typer.Option()] = REPORTS / "first_add.json",
) -> None:
    """The first add() of a new process on a home a bulk load just filled."""
    from bench import first_add as fa

    report = fa.run(size)
    publish(report, out, fa.print_report)


@app.command("import")
def import_rate(
    size: Annotated[int, typer.Option(help="Memories in the exported store.")] = 10_000,
    out: Annotated[Path, typer.Option()] = REPORTS / "import.json",
) -> None:
    """Bulk import: memoryd import of an export, against the bare model on the same texts."""
    from bench import import_rate as ir

    report = ir.run(size)
    publish(report, out, ir.print_report)


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
    report = sv.run(size, seconds, levels, counts, database_url(database))
    publish(report, out, sv.print_report)
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
    publish(report, out, px.print_report)


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
    publish(report, out, rr.print_report)


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

    check_ingest(mode)
    report = il.run(rounds, messages, chars, mode)
    publish(report, out, il.print_report)


@app.command("export-rss")
def export_rss(
    size: Annotated[int, typer.Option(help="Memories in the store.")] = 100_000,
    clients: Annotated[int, typer.Option(min=1, help="Exports read at once.")] = 2,
    out: Annotated[Path, typer.Option()] = REPORTS / "export_rss.json",
) -> None:
    """The server's memory while it streams GET /v1/export of a large store."""
    from bench import export_rss as bench_export

    publish(bench_export.run(size, clients), out, bench_export.print_report)


@app.command()
def footprint(
    adds: Annotated[int, typer.Option(min=1, help="Memories added one by one.")] = 1000,
    out: Annotated[Path, typer.Option()] = REPORTS / "footprint.json",
) -> None:
    """Bytes on disk a memory takes when added one by one, per table, with empty space."""
    from bench import footprint as fp

    publish(fp.run(adds), out, fp.print_report)
