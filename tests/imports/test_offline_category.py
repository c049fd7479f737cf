"""An import without an LLM files each section by its meaning, not all under ``entities``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from server_harness import memoryd_command

NOTES = """# Weekend in Porto

We arrived on Friday night and walked along the river. On Saturday we took a boat
under the bridges, and on Sunday it rained, so we stayed in a bookshop café.

# Bread starter

1. Mix equal weights of flour and water in a jar
2. Feed it every morning with the same again
3. Keep it warm; it is ready when it doubles in four hours

# Shower drain blocked

Water stood in the shower tray for days. A plunger did nothing; the trap was full of
hair. Took the trap apart, cleaned it, and the water runs away again.
"""


def test_sections_imported_offline_are_filed_by_what_they_say(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(NOTES, encoding="utf-8")
    home = tmp_path / "home"
    ran = subprocess.run(
        [*memoryd_command(home, "--json", "import-file", "--strategy", "section", str(notes))],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    listed = subprocess.run(
        [*memoryd_command(home, "--json", "list", "--limit", "50")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    filed = {m["l0_abstract"]: m["category"] for m in json.loads(listed.stdout)["memories"]}
    assert filed == {
        "Weekend in Porto": "events",
        "Bread starter": "patterns",
        "Shower drain blocked": "cases",
    }
