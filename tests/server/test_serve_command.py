"""``memoryd serve`` as a person runs it: a real process, its first key, its refusals."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import httpx
from server_harness import memoryd_command as _memoryd
from server_harness import spawn_server as _start
from server_harness import stop_process as _stop

KEY = re.compile(r"mk_[A-Za-z0-9_-]{20,}")


def test_first_start_prints_a_key_that_works_and_shares_the_cli_store(tmp_path: Path) -> None:
    home = tmp_path / "home"
    added = subprocess.run(
        _memoryd(home, "add", "Written by the command line"), capture_output=True, text=True
    )
    assert added.returncode == 0, added.stderr
    process, url = _start(home)
    try:
        headers = {"X-API-Key": ""}
        time.sleep(0.2)
    finally:
        first = _stop(process)
    match = KEY.search(first)
    assert match, first
    headers["X-API-Key"] = match.group(0)
    assert "shown only now" in first
    # a second start has keys already: it prints none, and the first key still works
    process, url = _start(home)
    try:
        found = httpx.get(f"{url}/v1/memories", headers=headers).json()
        assert [m["content"] for m in found["memories"]] == ["Written by the command line"]
        assert httpx.get(f"{url}/v1/memories").status_code == 401
    finally:
        second = _stop(process)
    assert not KEY.search(second)
    assert process.returncode == 0


def test_no_auth_is_refused_off_loopback(tmp_path: Path) -> None:
    refused = subprocess.run(
        _memoryd(tmp_path / "home", "serve", "--host", "0.0.0.0", "--no-auth"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 1
    assert "only allowed on a loopback address" in refused.stderr


def test_no_auth_on_loopback_needs_no_key(tmp_path: Path) -> None:
    process, url = _start(tmp_path / "home", "--no-auth")
    try:
        made = httpx.post(f"{url}/v1/memories", json={"content": "no key here"})
        assert made.status_code == 201 and made.json()["tenant_id"] == "local"
    finally:
        output = _stop(process)
    assert not KEY.search(output)


def test_a_busy_port_is_one_clear_error_before_the_banner(tmp_path: Path) -> None:
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        refused = subprocess.run(
            _memoryd(tmp_path / "home", "serve", "--port", str(port)),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert refused.returncode == 1
    assert f"port {port} on 127.0.0.1 is not free" in refused.stderr
    assert "--port" in refused.stderr and "Errno" not in refused.stderr + refused.stdout
    assert "serving" not in refused.stdout  # no banner for a server that never served


def test_the_banner_names_the_dashboard_and_the_proxy_upstream(tmp_path: Path) -> None:
    process, _ = _start(tmp_path / "home", "--no-auth")
    out = _stop(process)
    assert "dashboard at /" in out and "API docs at /docs" in out
    assert "memory proxy upstream: none set" in out


def test_version() -> None:
    from importlib.metadata import version

    shown = subprocess.run(
        _memoryd(Path("unused"), "--version"), capture_output=True, text=True, timeout=60
    )
    assert (shown.returncode, shown.stdout.strip()) == (0, f"memoryd {version('memoryd')}")
