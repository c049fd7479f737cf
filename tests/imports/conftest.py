"""Import tests run against real servers: the server harness and the scripted LLM are shared."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).parents[1]
for folder in ("server", "llm"):
    if str(TESTS / folder) not in sys.path:
        sys.path.insert(0, str(TESTS / folder))


from collections.abc import Callable  # noqa: E402

import pytest  # noqa: E402
from server_harness import TenantClient, module_server  # noqa: E402
from server_harness import make_tenant as make_tenant  # noqa: E402

# an offline server (no LLM) per module; the LLM module brings its own
server = module_server("imports")


@pytest.fixture
def tenant(make_tenant: Callable[[str], TenantClient]) -> TenantClient:
    return make_tenant("importer")
