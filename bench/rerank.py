"""What the LLM reranker costs a search, against a scripted stand-in model.

``MEMORYD_RERANK_PROVIDER=llm`` makes stage 6 one chat call a search. The
stand-in (a local OpenAI-compatible server) answers every call at once, or
after ``--model-ms``, with a neutral score for each result it was shown, so
what is measured is memoryd's side: the prompt it builds (characters and
estimated tokens), the time the round trip adds to a search beside the same
searches without a reranker, and that every search made exactly one call.
Quality needs a real model and is not measured here.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from typing import Any

from rich.console import Console
from rich.progress import Progress
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from bench.common import Timer, percentile_table, percentiles
from bench.speed import _search_ms, build_store
from bench.stand_in import serving
from bench.synthetic import queries
from memoryd.config import load_settings
from memoryd.embed.local import LocalEmbedder
from memoryd.inject import estimate_tokens
from memoryd.service import MemoryService

RESULT_LINE = re.compile(r"^\[\d+\] ", re.MULTILINE)


class StandIn:
    """The scripted model: a neutral score per result, after ``delay_s``; records prompts."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.prompts: list[str] = []

    async def completions(self, request: Request) -> JSONResponse:
        body = await request.json()
        prompt = "\n".join(m["content"] for m in body["messages"])
        self.prompts.append(prompt)
        await asyncio.sleep(self.delay_s)
        scores = [5] * len(RESULT_LINE.findall(body["messages"][-1]["content"]))
        return JSONResponse(
            {
                "id": "chatcmpl-bench",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "bench"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": json.dumps({"scores": scores})},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            }
        )


def run(size: int, n_queries: int, model_ms: float) -> dict[str, Any]:
    with Progress() as bar:
        store = build_store(size, bar)
    work = store.parent / f"n{size}-rerank"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(store, work)
    model = LocalEmbedder()
    stand_in = StandIn(model_ms / 1000)
    app = Starlette(routes=[Route("/v1/chat/completions", stand_in.completions, methods=["POST"])])
    texts = queries(n_queries)
    rows: dict[str, Any] = {}
    try:
        with serving(app) as url, Timer() as wall:
            plain_settings = load_settings(work)
            with MemoryService(settings=plain_settings, embedder=model) as svc:
                svc.search("warm up", touch=False)
                rows["without"] = percentiles(_search_ms(svc, texts))
            llm_settings = load_settings(
                work, rerank_provider="llm", llm_base_url=url, llm_model="stand-in"
            )
            with MemoryService(settings=llm_settings, embedder=model) as svc:
                svc.search("warm up", touch=False)
                stand_in.prompts.clear()
                rows["with_llm_rerank"] = percentiles(_search_ms(svc, texts))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    chars = [len(p) for p in stand_in.prompts]
    tokens = [estimate_tokens(p) for p in stand_in.prompts]
    return {
        "benchmark": "rerank",
        "questions": n_queries,
        "metrics": {
            **rows,
            "calls": len(stand_in.prompts),
            "prompt_chars_p50": percentiles([float(c) for c in chars])["p50"],
            "prompt_tokens_p50": percentiles([float(t) for t in tokens])["p50"],
            "prompt_tokens_max": max(tokens, default=0),
        },
        "config": {
            "size": size,
            "model_ms": model_ms,
            "search": "limit 10, query embedding included; the stand-in scores every result 5",
        },
        "wall_s": round(wall.seconds, 1),
    }


def print_report(report: dict[str, Any], console: Console) -> None:
    m = report["metrics"]
    table = percentile_table(
        f"LLM rerank ({report['config']['size']:,} memories, stand-in model answering "
        f"in {report['config']['model_ms']} ms, {report.get('cores')} cores)",
        "search",
        {name: m[name] for name in ("without", "with_llm_rerank")},
    )
    console.print(table)
    console.print(
        f"{m['calls']} calls for {report['questions']} searches; prompt p50 "
        f"{m['prompt_chars_p50']:.0f} characters, ~{m['prompt_tokens_p50']:.0f} tokens "
        f"(max {m['prompt_tokens_max']})",
        markup=False,
    )
