"""Summarisers: the configured LLM, or, without one, an offline extractive summariser.

Both answer the same question: these texts (messages for a leaf, summaries for
a condensed node), in about ``target`` tokens. The extractive one picks the
sentences that carry the most names, numbers and dates per token, keeps them in
order under ``[Date: …]`` lines, and lists every name, number and date it could
not keep a sentence for, so what the agent may ask about later survives the
compaction (``bench context`` measures the kept share). An LLM that fails or
answers garbage raises :class:`SummaryError`: the messages stay uncompacted and
the next turn tries again; nothing falls back silently.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memoryd.errors import MemorydError
from memoryd.inject import estimate_tokens
from memoryd.llm import LLMClient
from memoryd.llm.client import LLMError
from memoryd.prompts.context import CONDENSED_SYSTEM, LEAF_SYSTEM, CompactionAnswer
from memoryd.store.fts import STOPWORDS

ALSO = "Also mentioned: "
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_DATE = re.compile(
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}\b\.?(?:,?\s+\d{{4}})?|"
    rf"{_MONTH}\b\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?|"
    rf"{_MONTH}\s+\d{{4}}|\d{{4}}-\d{{2}}-\d{{2}}|"
    r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)|"
    r"(?:yesterday|tomorrow|tonight|(?:last|next|this)\s+(?:week|weekend|month|year|"
    r"summer|winter|spring|fall|autumn|night))|\d{4}年\d{1,2}月(?:\d{1,2}日)?)",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:/]\d+)*(?:%|st|nd|rd|th)?(?![\w])")
_NAME = re.compile(r"\b[A-Z][\w'’-]*[a-z][\w'’-]*(?:\s+[A-Z][\w'’-]*[a-z][\w'’-]*)*\b")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
# capitalised only because they start a sentence: not names
NOT_NAMES = STOPWORDS | frozenset(
    [
        "hey",
        "hi",
        "hello",
        "yes",
        "yeah",
        "no",
        "oh",
        "wow",
        "thanks",
        "thank",
        "sure",
        "okay",
        "ok",
        "well",
        "so",
        "also",
        "really",
        "great",
        "good",
        "nice",
        "cool",
        "awesome",
        "amazing",
        "congrats",
        "congratulations",
        "sorry",
        "please",
        "let",
        "i'm",
        "it's",
        "that's",
        "what's",
        "i've",
        "i'll",
        "i'd",
        "you're",
        "you've",
        "we're",
        "they're",
        "there's",
        "here's",
        "haha",
        "lol",
        "anyway",
        "btw",
        "maybe",
        "definitely",
        "totally",
        "absolutely",
    ]
)


class SummaryError(MemorydError):
    """No usable summary: the messages stay as they are until the next try."""

    code = "summary_error"
    prefix = "summary failed"
    http_status = 502


@dataclass(frozen=True)
class Source:
    """One text a summary covers: a message (with its speaker) or a child summary."""

    text: str
    role: str | None = None
    at: datetime | None = None


def entities(text: str, known_names: frozenset[str] | None = None) -> list[str]:
    """Names, numbers and dates of ``text``, each once, in order (as written).

    A capitalised word is a name where it is not the first of a sentence; a first
    word counts only when it is a name elsewhere (``known_names``, casefolded; by
    default the names of ``text`` itself).
    """
    found: dict[str, str] = {}
    for match in _DATE.finditer(text):
        found.setdefault(match.group(0).casefold(), match.group(0))
    dated = _DATE.sub(" ", text)
    for match in _NUMBER.finditer(dated):
        found.setdefault(match.group(0).casefold(), match.group(0))
    names = names_in(dated) if known_names is None else known_names
    for match in _NAME.finditer(dated):
        words = match.group(0).split()
        if _sentence_start(dated, match.start()) and words[0].casefold() not in names:
            words = words[1:]
        words = [w for w in words if w.casefold() not in NOT_NAMES]
        if words:
            name = " ".join(words)
            found.setdefault(name.casefold(), name)
    return list(found.values())


def names_in(text: str) -> frozenset[str]:
    """Capitalised words that stand where no sentence starts: names, casefolded."""
    return frozenset(
        w.casefold()
        for match in _NAME.finditer(text)
        if not _sentence_start(text, match.start())
        for w in match.group(0).split()
        if w.casefold() not in NOT_NAMES
    )


def _sentence_start(text: str, at: int) -> bool:
    before = text[:at].rstrip(" \t\"'(“‘")
    return not before or before[-1] in ".!?:;\n。！？"


def date_line(at: datetime) -> str:
    return f"[Date: {at.day} {at:%B %Y}]"


@dataclass(frozen=True)
class Summarised:
    """A summary's text, and the (subject, relation, object) facts the summariser saw."""

    text: str
    triples: tuple[tuple[str, str, str], ...] = ()


class Summariser(ABC):
    name: str

    @abstractmethod
    def summarise(self, kind: str, sources: Sequence[Source], target: int) -> Summarised:
        """A summary of ``sources`` in about ``target`` tokens; ``SummaryError`` if none."""


@dataclass
class _Sentence:
    order: int
    source: int
    text: str
    entities: frozenset[str]
    tokens: int
    header: str | None


class ExtractiveSummariser(Summariser):
    """Offline: sentences by names, numbers and dates per token, then the rest as a list."""

    name = "extractive"

    def __init__(self, date_headers: bool = True) -> None:
        self.date_headers = date_headers

    def summarise(self, kind: str, sources: Sequence[Source], target: int) -> Summarised:
        known = names_in(" \n".join(source.text for source in sources))
        sentences: list[_Sentence] = []
        for s, source in enumerate(sources):
            header = date_line(source.at) if source.at is not None else None
            for piece in _SENTENCE.split(source.text):
                piece = piece.strip()
                if not piece or piece.startswith(ALSO):
                    continue
                if piece.startswith("[Date: ") and piece.endswith("]"):
                    header = piece  # a child summary's date line dates what follows
                    continue
                keys = frozenset(e.casefold() for e in entities(piece, known))
                cost = estimate_tokens(piece) + 1
                sentences.append(_Sentence(len(sentences), s, piece, keys, cost, header))
        wanted: dict[str, str] = {}
        for source in sources:
            for e in entities(source.text.replace(ALSO, " "), known):
                wanted.setdefault(e.casefold(), e)
        chosen = self._choose(sentences, wanted, int(target * 0.7))
        body = self._render(sources, chosen)
        covered = body.casefold()
        rest = [e for key, e in wanted.items() if key not in covered]
        lines = [body] if body else []
        if rest:
            room = target - estimate_tokens(body) - estimate_tokens(ALSO)
            kept: list[str] = []
            for e in rest:
                cost = estimate_tokens(e) + 1
                if cost > room:
                    continue
                kept.append(e)
                room -= cost
            if kept:
                lines.append(ALSO + "; ".join(kept))
        summary = "\n".join(lines).strip()
        if not summary:  # nothing with a name, number or date: the first words stand for it
            first = " ".join(s.text for s in sources)
            summary = first[: max(40, target * 4)]
        return Summarised(summary)

    @staticmethod
    def _choose(sentences: list[_Sentence], wanted: dict[str, str], room: int) -> list[_Sentence]:
        missing = set(wanted)
        chosen: list[_Sentence] = []
        left = list(sentences)
        while left and room > 0 and missing:
            best = max(left, key=lambda s: (len(s.entities & missing) / s.tokens, -s.order))
            if not best.entities & missing:
                break
            left.remove(best)
            if best.tokens > room:
                continue
            chosen.append(best)
            room -= best.tokens
            missing -= best.entities
        return sorted(chosen, key=lambda s: s.order)

    def _render(self, sources: Sequence[Source], chosen: list[_Sentence]) -> str:
        lines: list[str] = []
        day: str | None = None
        previous = -1
        for sentence in chosen:
            source = sources[sentence.source]
            header = sentence.header
            if self.date_headers and header is not None and header != day:
                lines.append(header)
                day = header
                previous = -1
            if sentence.source == previous and lines:
                lines[-1] += " " + sentence.text
            else:
                lines.append(f"{source.role}: {sentence.text}" if source.role else sentence.text)
            previous = sentence.source
        return "\n".join(lines)


class LLMSummariser(Summariser):
    """The configured model, through ``complete_json`` (mended JSON, one correction)."""

    def __init__(self, llm: LLMClient, date_headers: bool = True) -> None:
        self.llm = llm
        self.name = f"llm:{llm.name}"
        self.date_headers = date_headers

    def summarise(self, kind: str, sources: Sequence[Source], target: int) -> Summarised:
        system = (LEAF_SYSTEM if kind == "leaf" else CONDENSED_SYSTEM).format(target=target)
        lines: list[str] = []
        day: str | None = None
        for source in sources:
            if self.date_headers and source.at is not None and date_line(source.at) != day:
                day = date_line(source.at)
                lines.append(day)
            lines.append(f"{source.role}: {source.text}" if source.role else source.text)
        transcript = "\n".join(lines)
        try:
            answer = self.llm.complete_json(
                [{"role": "system", "content": system}, {"role": "user", "content": transcript}],
                CompactionAnswer,
            )
        except LLMError as exc:
            raise SummaryError(exc.detail) from exc
        summary = answer.summary.strip()
        if estimate_tokens(summary) >= estimate_tokens(transcript):
            raise SummaryError(f"{self.llm.name} answered a summary no shorter than its source")
        return Summarised(summary, tuple(answer.triples))
