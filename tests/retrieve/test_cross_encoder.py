"""Stage 6, cross-encoder rerank: ``0.6 · rerank + 0.4 · original``.

The HTTP providers are exercised against a real HTTP server on 127.0.0.1 that
answers scripted rerank JSON; failures (HTTP 500, a timeout, a bad body, a
closed port) must leave the original scores untouched.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from memoryd.models import Memory
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SEED_RECIPE
from memoryd.retrieve.cross_encoder import (
    PROVIDERS,
    CohereCrossEncoder,
    CrossEncoder,
    HttpCrossEncoder,
    JinaCrossEncoder,
    PineconeCrossEncoder,
    VoyageCrossEncoder,
    create_cross_encoder,
    cross_encoder_rerank,
)

QUERY = "which editor does the user prefer"
CONTENTS = ["prefers vim", "uses emacs at work", "likes vscode"]
ORIGINAL = [0.9, 0.5, 0.3]
RERANK = [0.2, 1.0, 0.5]
# 0.6·0.2 + 0.4·0.9 = 0.12 + 0.36 = 0.48
# 0.6·1.0 + 0.4·0.5 = 0.60 + 0.20 = 0.80
# 0.6·0.5 + 0.4·0.3 = 0.30 + 0.12 = 0.42
BLENDED = [0.48, 0.8, 0.42]


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class RerankServer:
    url: str
    status: int = 200
    body: bytes = b"{}"
    delay: float = 0.0
    requests: list[Recorded] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def reply(self, payload: Any, status: int = 200) -> None:
        self.status = status
        self.body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()


@pytest.fixture
def server() -> Iterator[RerankServer]:
    state: RerankServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            state.requests.append(
                Recorded(
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=json.loads(raw) if raw else None,
                )
            )
            if state.delay:
                state.release.wait(state.delay)
            try:
                self.send_response(state.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(state.body)))
                self.end_headers()
                self.wfile.write(state.body)
            except OSError:  # the client gave up (timeout test)
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    port = httpd.server_address[1]
    state = RerankServer(url=f"http://127.0.0.1:{port}/rerank")
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=2)


def candidates(scores: list[float] = ORIGINAL) -> list[Candidate]:
    return [
        Candidate(rowid=i, memory=Memory(content=text), score=s)
        for i, (text, s) in enumerate(zip(CONTENTS, scores, strict=True))
    ]


def results(key: str, score_key: str, scores: list[float]) -> dict[str, Any]:
    # real APIs answer best first, so the order is shuffled relative to the documents
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    return {key: [{"index": i, score_key: scores[i]} for i in order]}


# --- defaults ---------------------------------------------------------------------------


def test_the_providers_own_endpoints() -> None:
    """No test reaches a provider; these are the addresses each documents."""
    assert JinaCrossEncoder("k").url == "https://api.jina.ai/v1/rerank"
    assert VoyageCrossEncoder("k").url == "https://api.voyageai.com/v1/rerank"
    assert PineconeCrossEncoder("k").url == "https://api.pinecone.io/rerank"
    assert CohereCrossEncoder("k").url == "https://api.cohere.com/v2/rerank"
    assert JinaCrossEncoder("k").timeout == 5.0  # seed: "Timeout: 5 seconds"


def test_factory() -> None:
    assert create_cross_encoder("", "key") is None
    enc = create_cross_encoder("voyage", "key", model="rerank-lite", base_url="http://x/rr")
    assert isinstance(enc, VoyageCrossEncoder)
    assert (enc.url, enc.model, enc.api_key) == ("http://x/rr", "rerank-lite", "key")
    assert set(PROVIDERS) == {"jina", "voyage", "cohere", "pinecone"}


# --- skipped ----------------------------------------------------------------------------


def test_skipped_without_reranker() -> None:
    cands = candidates()
    out = cross_encoder_rerank(cands, QUERY, None, SEED_RECIPE)
    assert [c.score for c in out] == ORIGINAL
    assert all(c.pre_rerank_score is None for c in out)


def test_no_candidates_no_request(server: RerankServer) -> None:
    enc = JinaCrossEncoder("key", base_url=server.url)
    assert cross_encoder_rerank([], QUERY, enc, SEED_RECIPE) == []
    assert server.requests == []


# --- each provider over real HTTP -------------------------------------------------------


def test_jina(server: RerankServer) -> None:
    server.reply(results("results", "relevance_score", RERANK))
    enc = JinaCrossEncoder("jina-key", base_url=server.url)
    out = cross_encoder_rerank(candidates(), QUERY, enc, SEED_RECIPE)
    assert [c.score for c in out] == pytest.approx(BLENDED, rel=1e-12)
    assert [c.pre_rerank_score for c in out] == ORIGINAL
    (req,) = server.requests
    assert req.path == "/rerank"
    assert req.headers["authorization"] == "Bearer jina-key"
    assert req.body == {
        "model": "jina-reranker-v2-base-multilingual",
        "query": QUERY,
        "documents": CONTENTS,
        "top_n": 3,
    }


def test_voyage(server: RerankServer) -> None:
    server.reply(results("data", "relevance_score", RERANK))
    enc = VoyageCrossEncoder("voyage-key", base_url=server.url)
    out = cross_encoder_rerank(candidates(), QUERY, enc, SEED_RECIPE)
    assert [c.score for c in out] == pytest.approx(BLENDED, rel=1e-12)
    (req,) = server.requests
    assert req.headers["authorization"] == "Bearer voyage-key"
    assert req.body == {"model": "rerank-2", "query": QUERY, "documents": CONTENTS, "top_k": 3}


def test_cohere(server: RerankServer) -> None:
    server.reply(results("results", "relevance_score", RERANK))
    enc = CohereCrossEncoder("cohere-key", base_url=server.url)
    out = cross_encoder_rerank(candidates(), QUERY, enc, SEED_RECIPE)
    assert [c.score for c in out] == pytest.approx(BLENDED, rel=1e-12)
    (req,) = server.requests
    assert req.headers["authorization"] == "Bearer cohere-key"
    assert req.body == {
        "model": "rerank-v3.5",
        "query": QUERY,
        "documents": CONTENTS,
        "top_n": 3,
    }


def test_pinecone(server: RerankServer) -> None:
    server.reply(results("data", "score", RERANK))
    enc = PineconeCrossEncoder("pc-key", base_url=server.url)
    out = cross_encoder_rerank(candidates(), QUERY, enc, SEED_RECIPE)
    assert [c.score for c in out] == pytest.approx(BLENDED, rel=1e-12)
    (req,) = server.requests
    assert req.headers["api-key"] == "pc-key"
    assert req.headers["x-pinecone-api-version"] == "2025-01"
    assert "authorization" not in req.headers
    assert req.body == {
        "model": "bge-reranker-v2-m3",
        "query": QUERY,
        "top_n": 3,
        "documents": [{"text": t} for t in CONTENTS],
        "return_documents": False,
    }


def test_rerank_keeps_candidate_order(server: RerankServer) -> None:
    # the stage re-scores in place; sorting is left to later stages
    server.reply(results("results", "relevance_score", RERANK))
    enc = JinaCrossEncoder("k", base_url=server.url)
    out = cross_encoder_rerank(candidates(), QUERY, enc, SEED_RECIPE)
    assert [c.rowid for c in out] == [0, 1, 2]


def test_custom_rerank_weight(server: RerankServer) -> None:
    server.reply(results("results", "relevance_score", RERANK))
    enc = JinaCrossEncoder("k", base_url=server.url)
    cfg = replace(SEED_RECIPE, rerank_weight=0.5)
    out = cross_encoder_rerank(candidates(), QUERY, enc, cfg)
    # 0.5·0.2 + 0.5·0.9 = 0.55 ; 0.5·1.0 + 0.5·0.5 = 0.75 ; 0.5·0.5 + 0.5·0.3 = 0.4
    assert [c.score for c in out] == pytest.approx([0.55, 0.75, 0.4], rel=1e-12)


def test_document_missing_from_answer_scores_zero_rerank(server: RerankServer) -> None:
    # only index 1 comes back: the others get rerank 0 → 0.4 × original
    server.reply({"results": [{"index": 1, "relevance_score": 1.0}]})
    enc = JinaCrossEncoder("k", base_url=server.url)
    out = cross_encoder_rerank(candidates(), QUERY, enc, SEED_RECIPE)
    # 0.4·0.9 = 0.36 ; 0.6·1 + 0.4·0.5 = 0.8 ; 0.4·0.3 = 0.12
    assert [c.score for c in out] == pytest.approx([0.36, 0.8, 0.12], rel=1e-12)


# --- failures keep the original scores --------------------------------------------------


def assert_untouched(out: list[Candidate]) -> None:
    assert [c.score for c in out] == ORIGINAL
    assert all(c.pre_rerank_score is None for c in out)


def test_server_error_keeps_scores(server: RerankServer) -> None:
    server.reply({"error": "boom"}, status=500)
    enc = JinaCrossEncoder("k", base_url=server.url)
    assert_untouched(cross_encoder_rerank(candidates(), QUERY, enc, SEED_RECIPE))
    assert len(server.requests) == 1


def test_unauthorised_keeps_scores(server: RerankServer) -> None:
    server.reply({"detail": "bad key"}, status=401)
    enc = CohereCrossEncoder("k", base_url=server.url)
    assert_untouched(cross_encoder_rerank(candidates(), QUERY, enc, SEED_RECIPE))


def test_timeout_keeps_scores(server: RerankServer) -> None:
    server.reply(results("results", "relevance_score", RERANK))
    server.delay = 2.0  # released at teardown; the client gives up after 0.2 s
    enc = JinaCrossEncoder("k", base_url=server.url, timeout=0.2)
    assert_untouched(cross_encoder_rerank(candidates(), QUERY, enc, SEED_RECIPE))


def test_non_json_body_keeps_scores(server: RerankServer) -> None:
    server.reply(b"<html>gateway</html>")
    enc = VoyageCrossEncoder("k", base_url=server.url)
    assert_untouched(cross_encoder_rerank(candidates(), QUERY, enc, SEED_RECIPE))


def test_wrong_shape_keeps_scores(server: RerankServer) -> None:
    # Pinecone reads "data"/"score"; a Jina-shaped answer lacks both
    server.reply(results("results", "relevance_score", RERANK))
    enc = PineconeCrossEncoder("k", base_url=server.url)
    assert_untouched(cross_encoder_rerank(candidates(), QUERY, enc, SEED_RECIPE))


def test_index_out_of_range_keeps_scores(server: RerankServer) -> None:
    server.reply({"results": [{"index": 7, "relevance_score": 0.9}]})
    enc = JinaCrossEncoder("k", base_url=server.url)
    assert_untouched(cross_encoder_rerank(candidates(), QUERY, enc, SEED_RECIPE))


def test_connection_refused_keeps_scores() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # the port is closed again: nothing listens there
    enc: HttpCrossEncoder = JinaCrossEncoder("k", base_url=f"http://127.0.0.1:{port}/rerank")
    assert_untouched(cross_encoder_rerank(candidates(), QUERY, enc, SEED_RECIPE))


# --- non-HTTP rerankers -----------------------------------------------------------------


class LocalReranker(CrossEncoder):
    """A local (non-HTTP) reranker: the stage accepts any ``CrossEncoder``."""

    def __init__(self, answer: list[float] | Exception) -> None:
        self.answer = answer

    def rerank(self, query: str, documents: list[str]) -> list[float]:
        if isinstance(self.answer, Exception):
            raise self.answer
        return list(self.answer)


def test_local_reranker_blend() -> None:
    out = cross_encoder_rerank(candidates(), QUERY, LocalReranker(RERANK), SEED_RECIPE)
    assert [c.score for c in out] == pytest.approx(BLENDED, rel=1e-12)


def test_local_reranker_failure_keeps_scores() -> None:
    enc = LocalReranker(RuntimeError("model crashed"))
    assert_untouched(cross_encoder_rerank(candidates(), QUERY, enc, SEED_RECIPE))


def test_local_reranker_short_answer_keeps_scores() -> None:
    enc = LocalReranker([0.2, 1.0])  # one score short
    assert_untouched(cross_encoder_rerank(candidates(), QUERY, enc, SEED_RECIPE))
