"""How the vector index numbers memory types: one small number a row, beside its windows.

A search for some types (smart ingest compares a new fact with the distilled
and pinned memories only) is then filtered in the index, not by reading the
space's rows. A saved rows file records the names in this order and is read
back only with the same. Kept apart from the index's arrays so that the SQL
that reads the column needs no NumPy: the CLI's commands that do not search
start without it.
"""

from __future__ import annotations

from memoryd.models import MemoryType

KIND_NAMES = tuple(t.value for t in MemoryType)
KIND_CODES = {name: code for code, name in enumerate(KIND_NAMES)}
UNKNOWN_KIND = -1
