"""Fixtures of the MCP tests: the harness of the server tests is shared, not copied."""

from __future__ import annotations

import sys
from pathlib import Path

# server_harness (start_server) lives with the REST server's tests
SERVER_TESTS = str(Path(__file__).resolve().parents[1] / "server")
if SERVER_TESTS not in sys.path:
    sys.path.insert(0, SERVER_TESTS)
