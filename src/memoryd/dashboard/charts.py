"""Small SVG charts, computed here and drawn by the templates: no chart library, no script.

A bar's geometry is plain numbers (x, y, width, height) in a fixed view box;
the browser scales the SVG to the page, so a chart reads at 375 px as at 1200.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

WIDTH, HEIGHT = 600, 160
PALETTE = ("#2456c9", "#2e9e6b", "#d98a1a", "#9b4dca", "#c94f4f", "#4fa3c9", "#7a7a7a")


@dataclass
class Segment:
    label: str
    count: int
    y: float
    height: float
    color: str


@dataclass
class Bar:
    day: str
    total: int
    x: float
    width: float
    segments: list[Segment] = field(default_factory=list)


@dataclass
class DailyChart:
    bars: list[Bar]
    legend: list[tuple[str, str]]  # (label, color)
    peak: int
    width: int = WIDTH
    height: int = HEIGHT


def daily(
    timeline: list[dict[str, Any]], days: int, today: date, by: str = "by_category"
) -> DailyChart:
    """Memories added per day over the last ``days``, stacked by category (or ``by_type``)."""
    by_day = {row["date"]: row[by] for row in timeline}
    labels = sorted({kind for kinds in by_day.values() for kind in kinds})
    colors = {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(labels)}
    span = [(today - timedelta(days=days - 1 - i)).isoformat() for i in range(days)]
    peak = max((sum(by_day.get(d, {}).values()) for d in span), default=0) or 1
    step = WIDTH / days
    bars = []
    for i, day in enumerate(span):
        kinds = by_day.get(day, {})
        bar = Bar(day, sum(kinds.values()), i * step + 1, max(step - 2, 1))
        top = float(HEIGHT)
        for label in labels:
            n = kinds.get(label, 0)
            if n:
                h = HEIGHT * n / peak
                top -= h
                bar.segments.append(Segment(label, n, top, h, colors[label]))
        bars.append(bar)
    return DailyChart(bars, [(label, colors[label]) for label in labels], peak)


def shares(counts: dict[str, int]) -> list[tuple[str, int, float]]:
    """(label, count, share of the largest, 0..100), largest first: horizontal bars."""
    peak = max(counts.values(), default=0) or 1
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(label, n, 100 * n / peak) for label, n in ordered]
