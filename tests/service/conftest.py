"""Every service test runs on both backends: SQLite in the home, and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from backends import on_backend


@pytest.fixture
def home(
    home: Path, backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Path:
    return on_backend(home, backend, request, monkeypatch)
