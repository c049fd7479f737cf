"""Whose turn it is to run a periodic job, when several servers share one database.

Every ``memoryd serve`` process runs the schedules (consolidation, session
layers) on its own timer. A run takes its turn first: one statement, the same
on both backends, records the time of the run under the job's name unless
another process recorded one less than ``TURN_SLACK`` of the interval ago.
So N servers run each job about once an interval between them, and when
one stops, the others' timers take its turns.
"""

from __future__ import annotations

from datetime import datetime

from memoryd.store.rows import to_us

# a timer fires a little early or late: a turn taken this share of an interval ago is still
# the last one
TURN_SLACK = 0.9
_PREFIX = "turn:"


def turn_sql(placeholder: str) -> str:
    """The statement that takes a turn (a row back: taken), with the backend's ``placeholder``:
    the key, the time now, and the latest time the last turn may have been taken."""
    p = placeholder
    return (
        f"INSERT INTO meta(key, value) VALUES ({p}, {p}) ON CONFLICT (key) DO UPDATE "
        f"SET value = excluded.value WHERE CAST(meta.value AS BIGINT) <= {p} RETURNING key"
    )


def turn_params(job: str, every_s: float, now: datetime) -> tuple[str, str, int]:
    at = to_us(now)
    assert at is not None
    return _PREFIX + job, str(at), at - int(TURN_SLACK * every_s * 1_000_000)
