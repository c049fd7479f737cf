"""The README's benchmark table and docs/results.md are what ``bench report`` renders.

Both are written from ``bench/results.json`` (committed, each benchmark's
figures with the commit they were measured at); a figure typed into either
by hand, or a results file changed without rendering, fails here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import report


def test_the_readme_and_the_results_page_are_rendered_from_the_committed_results() -> None:
    readme, page = report.render(report.load())
    assert report.README.read_text(encoding="utf-8") == readme, "run: python -m bench report"
    assert report.PAGE.read_text(encoding="utf-8") == page, "run: python -m bench report"


def test_a_report_of_another_commit_is_refused_unless_told(tmp_path: Path) -> None:
    locomo = {
        "benchmark": "locomo_turn",
        "commit": "0000000-dirty",
        "questions": 2,
        "metrics": {"recall@5": 0.5, "recall@10": 1.0, "session_R@5_any": 1.0},
        "parts": {},
    }
    (tmp_path / "locomo.json").write_text(json.dumps(locomo))
    with pytest.raises(report.StaleReport, match="not at HEAD"):
        report.gather(tmp_path, "1234567")
    gathered = report.gather(tmp_path, "1234567", any_commit=True)
    assert gathered["locomo"]["commit"] == "0000000-dirty"
    assert gathered["locomo"]["figures"]["all:recall@10"] == 1.0
    table = report.readme_table(gathered)
    assert "| LoCoMo dev, turn recall@10 | - | - | 1.000 | 0000000-dirty |" in table
