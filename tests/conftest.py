"""Shared fixtures: real SQLite files in temporary homes, the real bundled model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryd.embed.local import LocalEmbedder
from memoryd.service import MemoryService

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test talks to loopback only (servers, the scripted LLM): never through a proxy.

    httpx honours the proxy variables of the machine, and so do the
    processes a test starts, which inherit this environment.
    """
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture(scope="session")
def embedder() -> LocalEmbedder:
    """One loaded model for the whole run: loading it is the slow part."""
    return LocalEmbedder()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    monkeypatch.setenv("MEMORYD_HOME", str(path))
    monkeypatch.delenv("MEMORYD_CONFIG", raising=False)
    return path


@pytest.fixture
def service(home: Path, embedder: LocalEmbedder) -> Iterator[MemoryService]:
    svc = MemoryService(home, embedder=embedder)
    yield svc
    svc.close()


@pytest.fixture(name="STAGES")
def stages() -> list[str]:
    """The 16 stage names of a default-recipe search trace, in order."""
    return [
        "parallel_search",
        "convex_fusion",
        "speaker_match",
        "date_match",
        "rrf_normalize",
        "session_support",
        "neighbour_support",
        "min_score_filter",
        "topk_cap",
        "cross_encoder",
        "bm25_floor",
        "decay_boost",
        "importance_weight",
        "length_norm",
        "hard_cutoff",
        "mmr_diversity",
    ]
