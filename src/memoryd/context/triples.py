"""Knowledge-graph triples: (subject, predicate, object) said in a conversation.

Extracted at ingest by rules (a named subject, or "I" as the speaker, then one of
a small set of relation verbs, then the object up to the end of the clause), so
they exist offline; with an LLM configured, the call that writes a summary also
returns the triples of what it covers. Recall (layer L3) adds a triple whose entities the query
names when none of the recalled memories already says it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memoryd.models import utcnow
from memoryd.store.database import Database
from memoryd.store.rows import to_us
from memoryd.text.conversation import GENERIC_ROLES

PREDICATES = (
    "is married to|is engaged to|is dating|works at|works for|work at|work for|lives in|"
    "live in|moved to|move to|grew up in|studies at|study at|is from|am from|is a|am a|"
    "was born in|adopted|bought|joined|started|prefers|prefer|loves|love|likes|like|"
    "hates|hate|plays|play|owns|own|has|have|visited|went to|is|was|am"
)
_TRIPLE = re.compile(
    rf"\b(?P<s>I|[A-Z][a-z][\w'-]*(?: [A-Z][a-z][\w'-]*)?) (?P<p>{PREDICATES}) "
    r"(?P<o>[^.,;:!?\n]{2,80})"
)
MAX_OBJECT_WORDS = 8
MAX_TRIPLES_PER_TEXT = 12


@dataclass(frozen=True)
class Triple:
    subject: str
    predicate: str
    object: str

    @property
    def line(self) -> str:
        return f"{self.subject} {self.predicate} {self.object}"


def extract(text: str, speaker: str | None = None) -> list[Triple]:
    """The triples ``text`` states; "I" becomes the speaker when the speaker has a name."""
    named = speaker if speaker and speaker.strip().lower() not in GENERIC_ROLES else None
    out: dict[tuple[str, str, str], Triple] = {}
    for match in _TRIPLE.finditer(text):
        subject = match.group("s")
        if subject == "I":
            if named is None:
                continue
            subject = named
        obj = " ".join(match.group("o").split()[:MAX_OBJECT_WORDS]).strip(" '\"")
        if len(obj) < 2:
            continue
        triple = Triple(subject, match.group("p"), obj)
        out.setdefault((subject.casefold(), triple.predicate, obj.casefold()), triple)
        if len(out) >= MAX_TRIPLES_PER_TEXT:
            break
    return list(out.values())


class TripleStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def add(
        self, conn: sqlite3.Connection, tenant_id: str, triples: Iterable[Triple], source: str
    ) -> None:
        now = to_us(utcnow())
        conn.executemany(
            "INSERT OR IGNORE INTO kg_triples (tenant_id, subject, predicate, object, "
            "subject_key, object_key, source, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    tenant_id,
                    t.subject,
                    t.predicate,
                    t.object,
                    t.subject.casefold(),
                    t.object.casefold(),
                    source,
                    now,
                )
                for t in triples
            ],
        )

    def about(self, tenant_id: str, names: Sequence[str], limit: int) -> list[Triple]:
        """Triples whose subject or object is one of ``names`` (case-insensitive), newest first."""
        keys = list(dict.fromkeys(n.casefold() for n in names))
        if not keys:
            return []
        marks = ",".join("?" * len(keys))
        rows = self.db.conn.execute(
            "SELECT subject, predicate, object FROM kg_triples WHERE tenant_id = ? AND "
            f"(subject_key IN ({marks}) OR object_key IN ({marks})) "
            "ORDER BY created_at DESC, rowid DESC LIMIT ?",
            (tenant_id, *keys, *keys, limit),
        ).fetchall()
        return [Triple(str(r[0]), str(r[1]), str(r[2])) for r in rows]
