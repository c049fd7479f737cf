"""Fixtures: a memoryd server whose memory proxy forwards to a scripted upstream."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).parents[1]
for folder in ("server", "llm"):
    if str(TESTS / folder) not in sys.path:
        sys.path.insert(0, str(TESTS / folder))

from proxy_helpers import UPSTREAM_KEY  # noqa: E402
from scripted_upstream import ScriptedUpstream  # noqa: E402
from server_harness import RunningServer, start_server  # noqa: E402
from server_harness import make_tenant as make_tenant  # noqa: E402

from memoryd.embed.local import LocalEmbedder  # noqa: E402


@pytest.fixture(scope="module")
def upstream() -> Iterator[ScriptedUpstream]:
    with ScriptedUpstream() as server:
        yield server


@pytest.fixture(autouse=True)
def fresh_upstream(upstream: ScriptedUpstream) -> None:
    """Each test starts with no script left, no recorded request, the gate closed."""
    upstream.requests.clear()
    upstream._script.clear()
    upstream.gate.clear()
    upstream.stats.finished = 0
    upstream.stats.aborted.clear()


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder, upstream: ScriptedUpstream
) -> Iterator[RunningServer]:
    running, stop = start_server(
        tmp_path_factory.mktemp("proxy") / "home",
        embedder,
        upstream_url=upstream.url,
        upstream_api_key=UPSTREAM_KEY,
        upstream_timeout_s=5.0,
        # the operator lets tenants map models to the scripted upstream on loopback
        upstream_allow=["public", upstream.url],
    )
    yield running
    stop()
