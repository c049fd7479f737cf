"""The OpenAI-compatible embedder against a real HTTP server on 127.0.0.1.

The server speaks ``POST /v1/embeddings`` in the OpenAI response shape and
answers with scripted vectors: the first ``dim`` bytes of SHA-256 of each
input, mapped to [-1, 1] (never zero), so every answer can be checked
exactly. It returns ``data`` in reverse order (the client must sort by
``index``), honours ``encoding_format`` (the openai client asks for base64
unless told otherwise) and records every request it gets. Inputs containing
``ZERO`` get a zero vector and ``SHORT`` a vector of 4 numbers.
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import openai
import pytest

from memoryd.config import load_settings
from memoryd.embed import create_embedder
from memoryd.embed.local import LocalEmbedder
from memoryd.embed.openai import OpenAIEmbedder
from memoryd.errors import EmbeddingError, EmbeddingMismatchError, ValidationError
from memoryd.service import MemoryService
from memoryd.text.attribute_tables import ATTRIBUTES, NOT_A_VALUE_EXAMPLES

DIM = 8
MODEL = "test-embed"


def scripted_vector(text: str, dim: int = DIM) -> list[float]:
    if "ZERO" in text:
        return [0.0] * dim
    if "SHORT" in text:
        dim = 4
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [(b - 127.5) / 127.5 for b in digest[:dim]]


def expected_unit(text: str, dim: int = DIM) -> np.ndarray:
    row = np.asarray(scripted_vector(text, dim), dtype=np.float32)
    return row / np.linalg.norm(row)


class FakeEmbeddingServer:
    """A scripted OpenAI-compatible embeddings endpoint in a background thread."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.fail_status: int | None = None
        self.force_floats = False  # answer floats even when base64 is asked for
        self.drop_last_row = False
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @property
    def inputs(self) -> list[list[str]]:
        """The ``input`` list of each embeddings request, in arrival order."""
        return [r["body"]["input"] for r in self.requests if r["path"] == "/v1/embeddings"]

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def answer(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        with self._lock:
            self.requests.append({"path": path, "body": body, "headers": headers})
        if path != "/v1/embeddings":
            return 404, {"error": {"message": f"no route {path}", "type": "invalid_request"}}
        if self.fail_status == 401:
            return 401, {
                "error": {
                    "message": "Incorrect API key provided",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            }
        if self.fail_status is not None:
            return self.fail_status, {
                "error": {"message": "the embedding backend crashed", "type": "server_error"}
            }
        texts = body["input"]
        if isinstance(texts, str):
            texts = [texts]
        dim = int(body.get("dimensions") or DIM)
        base64_wanted = body.get("encoding_format") == "base64" and not self.force_floats
        data = []
        for i, text in enumerate(texts):
            vector: Any = scripted_vector(text, dim)
            if base64_wanted:
                vector = base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()
            data.append({"object": "embedding", "index": i, "embedding": vector})
        if self.drop_last_row:
            data = data[:-1]
        data.reverse()  # out of order on purpose: the client must sort by index
        tokens = sum(len(t.split()) for t in texts)
        return 200, {
            "object": "list",
            "data": data,
            "model": body.get("model"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, payload = server.answer(self.path, json.loads(raw), headers)
                out = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                if status >= 500:
                    # the openai client retries 5xx; a tiny Retry-After keeps the test fast
                    self.send_header("retry-after-ms", "1")
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture
def server() -> Iterator[FakeEmbeddingServer]:
    srv = FakeEmbeddingServer()
    yield srv
    srv.stop()


# ---------------------------------------------------------------------- the embedder alone
def test_construction_probes_the_dimension(server: FakeEmbeddingServer) -> None:
    emb = OpenAIEmbedder(model=MODEL, base_url=server.url)
    assert emb.dim == DIM
    assert emb.name == f"openai:{MODEL}"
    assert server.inputs == [["dimension probe"]]
    request = server.requests[0]
    assert request["body"]["model"] == MODEL
    assert "dimensions" not in request["body"]
    assert request["headers"]["authorization"] == "Bearer none"  # no key configured


def test_vectors_follow_the_index_not_the_answer_order(server: FakeEmbeddingServer) -> None:
    emb = OpenAIEmbedder(model=MODEL, base_url=server.url, api_key="sk-test")
    texts = ["alpha", "beta", "gamma"]
    vectors = emb.embed(texts)
    assert vectors.dtype == np.float32
    assert vectors.shape == (3, DIM)
    for text, row in zip(texts, vectors, strict=True):
        np.testing.assert_allclose(row, expected_unit(text), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(emb.embed_one("beta"), expected_unit("beta"), atol=1e-6)
    assert server.requests[-1]["headers"]["authorization"] == "Bearer sk-test"


def test_float_answers_are_accepted_too(server: FakeEmbeddingServer) -> None:
    """Some compatible servers ignore ``encoding_format`` and always send floats."""
    server.force_floats = True
    emb = OpenAIEmbedder(model=MODEL, base_url=server.url)
    assert emb.dim == DIM
    vectors = emb.embed(["one", "two"])
    np.testing.assert_allclose(vectors[0], expected_unit("one"), atol=1e-6)
    np.testing.assert_allclose(vectors[1], expected_unit("two"), atol=1e-6)


def test_inputs_are_sent_in_batches(server: FakeEmbeddingServer) -> None:
    emb = OpenAIEmbedder(model=MODEL, base_url=server.url, batch_size=2)
    texts = [f"text number {i}" for i in range(5)]
    server.requests.clear()
    vectors = emb.embed(texts)
    assert server.inputs == [texts[0:2], texts[2:4], texts[4:5]]
    for text, row in zip(texts, vectors, strict=True):
        np.testing.assert_allclose(row, expected_unit(text), atol=1e-6)
    # an empty batch never reaches the server
    assert emb.embed([]).shape == (0, DIM)
    assert len(server.inputs) == 3


def test_dimensions_are_passed_through_and_skip_the_probe(server: FakeEmbeddingServer) -> None:
    emb = OpenAIEmbedder(model=MODEL, base_url=server.url, dimensions=16)
    assert emb.dim == 16
    assert emb.name == f"openai:{MODEL}@16"
    assert server.requests == []  # the configured size is trusted: no probe
    vectors = emb.embed(["sixteen numbers"])
    assert server.requests[0]["body"]["dimensions"] == 16
    assert vectors.shape == (1, 16)
    np.testing.assert_allclose(vectors[0], expected_unit("sixteen numbers", 16), atol=1e-6)


def test_a_server_error_is_an_embedding_error(server: FakeEmbeddingServer) -> None:
    emb = OpenAIEmbedder(model=MODEL, base_url=server.url)
    server.requests.clear()
    server.fail_status = 500
    with pytest.raises(EmbeddingError) as caught:
        emb.embed(["hello"])
    message = str(caught.value)
    assert message.startswith("embedding error: ")
    assert MODEL in message
    assert "500" in message
    assert "the embedding backend crashed" in message
    assert isinstance(caught.value.__cause__, openai.InternalServerError)
    # the openai client retries a 5xx before giving up (its default, not memoryd's)
    assert len(server.requests) == 1 + openai.DEFAULT_MAX_RETRIES


def test_a_rejected_key_fails_at_construction(server: FakeEmbeddingServer) -> None:
    server.fail_status = 401
    with pytest.raises(EmbeddingError) as caught:
        OpenAIEmbedder(model=MODEL, base_url=server.url, api_key="sk-wrong")
    message = str(caught.value)
    assert MODEL in message
    assert "401" in message
    assert "Incorrect API key provided" in message
    assert isinstance(caught.value.__cause__, openai.AuthenticationError)
    assert len(server.requests) == 1  # a 4xx is not retried


def test_an_unreachable_endpoint_is_an_embedding_error() -> None:
    """Connection refused, retried twice by the openai client (about 1–1.5 s of backoff)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(EmbeddingError) as caught:
        OpenAIEmbedder(model=MODEL, base_url=f"http://127.0.0.1:{port}/v1")
    assert MODEL in str(caught.value)
    assert isinstance(caught.value.__cause__, openai.APIConnectionError)


def test_a_zero_vector_is_refused(server: FakeEmbeddingServer) -> None:
    emb = OpenAIEmbedder(model=MODEL, base_url=server.url)
    with pytest.raises(EmbeddingError, match="zero or non-finite"):
        emb.embed(["fine", "a ZERO vector"])


def test_a_missing_row_is_refused(server: FakeEmbeddingServer) -> None:
    emb = OpenAIEmbedder(model=MODEL, base_url=server.url)
    server.drop_last_row = True
    with pytest.raises(EmbeddingError, match=r"returned shape \(2, 8\), expected \(3, 8\)"):
        emb.embed(["one", "two", "three"])


def test_a_vector_of_the_wrong_size_is_refused(server: FakeEmbeddingServer) -> None:
    emb = OpenAIEmbedder(model=MODEL, base_url=server.url)
    with pytest.raises(EmbeddingError, match=r"expected \(1, 8\)"):
        emb.embed(["a SHORT one"])


def test_rows_of_mixed_sizes_are_refused(server: FakeEmbeddingServer) -> None:
    emb = OpenAIEmbedder(model=MODEL, base_url=server.url)
    with pytest.raises(EmbeddingError):
        emb.embed(["a full row", "a SHORT one"])


def test_a_model_name_is_required(server: FakeEmbeddingServer) -> None:
    with pytest.raises(ValidationError, match="MEMORYD_EMBED_MODEL"):
        OpenAIEmbedder(model="", base_url=server.url)
    assert server.requests == []


def test_settings_choose_the_openai_embedder(
    server: FakeEmbeddingServer, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORYD_EMBEDDER", "openai")
    monkeypatch.setenv("MEMORYD_EMBED_BASE_URL", server.url)
    monkeypatch.setenv("MEMORYD_EMBED_MODEL", MODEL)
    monkeypatch.setenv("MEMORYD_EMBED_DIMENSIONS", "16")
    monkeypatch.setenv("MEMORYD_EMBED_BATCH_SIZE", "2")
    monkeypatch.setenv("MEMORYD_EMBED_API_KEY", "sk-from-env")
    emb = create_embedder(load_settings(home))
    assert isinstance(emb, OpenAIEmbedder)
    assert (emb.name, emb.dim) == (f"openai:{MODEL}@16", 16)
    emb.embed(["a", "b", "c"])
    assert server.inputs == [["a", "b"], ["c"]]
    assert {r["body"]["dimensions"] for r in server.requests} == {16}
    assert {r["headers"]["authorization"] for r in server.requests} == {"Bearer sk-from-env"}


# ---------------------------------------------------------------------- a whole service
NOTES = [
    "The staging database password rotates every Monday",
    "Alice prefers green tea over coffee",
    "The quarterly report is due on the fifth of March",
]


def test_service_configured_for_an_openai_endpoint(
    server: FakeEmbeddingServer,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    embedder: LocalEmbedder,
) -> None:
    monkeypatch.setenv("MEMORYD_EMBEDDER", "openai")
    monkeypatch.setenv("MEMORYD_EMBED_BASE_URL", server.url)
    monkeypatch.setenv("MEMORYD_EMBED_MODEL", MODEL)
    monkeypatch.delenv("MEMORYD_EMBED_DIMENSIONS", raising=False)
    monkeypatch.delenv("MEMORYD_EMBED_API_KEY", raising=False)

    with MemoryService(home) as svc:
        assert server.requests == []  # the model is loaded on first use, not at open
        ids = [svc.add(text).id for text in NOTES]
        assert server.inputs[0] == ["dimension probe"]
        # beside the notes: the example statements of each attribute and of none, once
        # (memoryd.ingest.attributes reads what a statement is about with them)
        examples = {e for _, texts in ATTRIBUTES.values() for e in texts}
        examples |= set(NOT_A_VALUE_EXAMPLES)
        sent = [t for batch in server.inputs[1:] for t in batch]
        assert sorted(t for t in sent if t not in examples) == sorted(NOTES)
        assert examples <= set(sent)

        # an exact copy of a memory is its own best vector and keyword match
        response = svc.search(NOTES[1], touch=False)
        assert response.results[0].memory.id == ids[1]
        assert response.results[0].memory.content == NOTES[1]
        # keywords alone find the memory too (the scripted vectors carry no meaning)
        hits = [r.memory.id for r in svc.search("quarterly report", touch=False).results]
        assert ids[2] in hits

        stats = svc.stats()
        assert stats["embedding_model"] == f"openai:{MODEL}"
        assert stats["total"] == len(NOTES)
        assert svc.store.get_meta("embed_dim") == str(DIM)

        # an identical text is embedded once per model: the cache answers the second time
        asked = len(server.requests)
        svc.add("The staging database password rotates every Tuesday")
        assert len(server.requests) == asked + 1
        svc.embed([NOTES[0]])
        assert len(server.requests) == asked + 1

    # the same home opened with the bundled local model is refused, not silently wrong
    monkeypatch.setenv("MEMORYD_EMBEDDER", "local")
    with MemoryService(home, embedder=embedder) as svc:
        with pytest.raises(EmbeddingMismatchError) as caught:
            svc.search("coffee")
        message = str(caught.value)
        assert f"openai:{MODEL}" in message
        assert "memoryd reindex" in message
        with pytest.raises(EmbeddingMismatchError):
            svc.add("a new memory")
        assert svc.stats()["total"] == len(NOTES) + 1
