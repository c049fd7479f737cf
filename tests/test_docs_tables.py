"""Every Markdown table of the README and docs/ is whole: no row broken across lines.

A row continued on the next line ends the table there for every renderer,
and the rest of the row shows as a paragraph of pipes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_table_row_is_broken_across_lines(page: Path) -> None:
    lines = page.read_text(encoding="utf-8").splitlines()
    fenced = False
    broken = []
    for number, (line, after) in enumerate(zip(lines, [*lines[1:], ""], strict=True), 1):
        if line.startswith("```"):
            fenced = not fenced
        if fenced:
            continue
        # a table ends at a blank line or a comment (bench report's markers), nowhere else
        if line.startswith("|") and after.strip() and not after.startswith(("|", "<!--")):
            broken.append(f"{page.name}:{number + 1}: {after[:60]}")
    assert not broken, "\n".join(broken)
