"""Data for the context engine tests: LoCoMo's first development conversation as messages."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

# beside the checkout, as the benchmarks expect it (bench.common.SHARED_DATA)
LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo_dev.json"


def locomo_turns(limit: int | None = None) -> list[dict[str, Any]]:
    """The first development conversation of LoCoMo as messages, dated by session."""
    data = json.loads(LOCOMO.read_text(encoding="utf-8"))
    conv = data[0]["conversation"]
    out: list[dict[str, Any]] = []
    n = 1
    while f"session_{n}" in conv:
        when = datetime.strptime(conv[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y")
        for turn in conv[f"session_{n}"]:
            out.append(
                {
                    "id": turn["dia_id"],
                    "role": turn["speaker"],
                    "content": turn["text"],
                    "created_at": when.isoformat() + "Z",
                }
            )
        n += 1
    return out[:limit] if limit else out
