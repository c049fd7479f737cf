"""Which attribute of the user a sentence is about, by meaning and by its words.

Each attribute has a handful of short example statements and the words of its subject
matter (:mod:`memoryd.text.attribute_tables`). An English sentence is about the
attribute whose examples its embedding is closest to (its words adding a bonus), when
that is close enough and clearly closer than the next; a Chinese one by its words alone,
the bundled model reading English only. Ingest reads statements so
(:mod:`memoryd.ingest.attributes`), search reads questions so
(:mod:`memoryd.retrieve.pipeline`): one reader for both.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import numpy.typing as npt

from memoryd.text.attribute_tables import (
    ATTRIBUTES,
    CUE_BONUS,
    CUES,
    NOT_A_VALUE,
    NOT_A_VALUE_EXAMPLES,
)
from memoryd.text.phrasing import CJK

if TYPE_CHECKING:
    from memoryd.embed import Embedder

# cosine to the closest example, and its lead over the next attribute's (tuned on half "tune")
MIN_SIMILARITY = 0.35
MIN_MARGIN = 0.02
# an English clause of fewer words is read by its words alone, never by meaning
MIN_WORDS = 2
# a second attribute named by its words counts when this close to the first
SECOND = 0.15
# a statement mostly in these characters is read by its words (the share of its characters)
CJK_SHARE = 0.3


# the bundled model's vectors of the examples, computed once and shipped: a new process
# reads them instead of running the model on every example (0.4 s on 2 cores). They are
# used only while the examples are the ones they were computed from (their digest).
SHIPPED = "assets/attribute_examples.npz"


def examples() -> tuple[list[str], list[str]]:
    """Every example statement with the attribute it stands for (``NOT_A_VALUE`` last)."""
    labels = [a for a, (_, said) in ATTRIBUTES.items() for _ in said]
    texts = [e for _, said in ATTRIBUTES.values() for e in said]
    labels += [NOT_A_VALUE] * len(NOT_A_VALUE_EXAMPLES)
    texts += NOT_A_VALUE_EXAMPLES
    return labels, texts


def digest(texts: list[str]) -> str:
    return hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()


def shipped(model: str, texts: list[str]) -> npt.NDArray[np.float32] | None:
    """The shipped vectors of ``texts`` for ``model``; None when they are of other examples
    or another model."""
    with resources.as_file(resources.files("memoryd.text").joinpath(SHIPPED)) as path:
        if not path.exists():
            return None
        with np.load(path) as saved:
            if str(saved["model"]) != model or str(saved["digest"]) != digest(texts):
                return None
            vectors: npt.NDArray[np.float32] = saved["vectors"].astype(np.float32)
    return vectors


def write_shipped(embedder: Embedder) -> Path:
    """Compute the examples' vectors with ``embedder`` and keep them in the package (run
    after the examples change: ``python -m bench attribute-vectors``)."""
    _, texts = examples()
    target = Path(str(resources.files("memoryd.text").joinpath(SHIPPED)))
    target.parent.mkdir(parents=True, exist_ok=True)
    vectors = embedder.embed(texts)
    with target.open("wb") as out:
        np.savez_compressed(out, model=embedder.name, digest=digest(texts), vectors=vectors)
    return target


class Prototypes:
    """The attributes' example vectors for one embedder, found once per process."""

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _cache: ClassVar[dict[str, tuple[list[str], npt.NDArray[np.float32]]]] = {}

    @classmethod
    def of_embedder(
        cls,
        embedder: Embedder,
        embed: Callable[[list[str]], npt.NDArray[np.float32]] | None = None,
    ) -> tuple[list[str], npt.NDArray[np.float32]]:
        """The labels and vectors: shipped for the bundled model, else embedded (by
        ``embed`` when given: through a store's cache, so a new process skips the model)."""
        name = embedder.name
        with cls._lock:
            found = cls._cache.get(name)
        if found is not None:
            return found
        labels, texts = examples()
        vectors = shipped(name, texts)
        if vectors is None:
            vectors = (embed or embedder.embed)(texts)
        with cls._lock:
            cls._cache[name] = (labels, vectors)
        return labels, vectors


def is_cjk(words: str) -> bool:
    return len(CJK.findall(words)) >= CJK_SHARE * max(1, len(words.strip()))


def named_attributes(words: str) -> list[str]:
    """The attributes whose words ``words`` holds."""
    return [name for name, cue in CUES.items() if cue.search(words)]


def asked_attributes(
    query: str, query_vector: npt.NDArray[np.float32] | None, embedder: Embedder
) -> list[str]:
    """The attributes of the user a question asks about ("where does the user live":
    residence), read as a statement is: its words, and in English its meaning."""
    cued = named_attributes(query)
    if is_cjk(query) or query_vector is None:
        return [a for a in cued if a in ATTRIBUTES]
    labels, examples = Prototypes.of_embedder(embedder)
    row = (examples @ query_vector).tolist()
    return [a for a in by_meaning(labels, row, cued, mine=True) if a in ATTRIBUTES]


def by_meaning(
    labels: list[str], row: list[float], cued: list[str], mine: bool = False
) -> list[str]:
    """The attribute whose examples are nearest (with its words' bonus), when near enough
    and clearly nearest; then any other attribute named by its words and nearly as near.

    A sentence that does not name the user (``mine`` false) and whose meaning is nearest
    to what is not a value of the user's (a note to self, a trip, another's news) is
    none, whatever words it holds: an employer named in a reminder, a city in a trip
    report. The words' bonus weighs between attributes; it does not turn such a sentence
    into a statement of one. One that names the user ("I'm a baker at …") is theirs, and
    the examples' own topics (a bakery's opening) do not outweigh that."""
    best: dict[str, float] = {}
    for label, sim in zip(labels, row, strict=True):
        best[label] = max(best.get(label, -1.0), sim)
    if not mine and max(best, key=best.__getitem__) == NOT_A_VALUE:
        return []
    for label in cued:
        if label in best:
            best[label] += CUE_BONUS
    ranked = sorted(best.items(), key=lambda kv: kv[1], reverse=True)
    (top, score), runner_up = ranked[0], ranked[1][1] if len(ranked) > 1 else -1.0
    if top == NOT_A_VALUE or score < MIN_SIMILARITY or score - runner_up < MIN_MARGIN:
        return []
    also = [a for a, v in ranked[1:] if a in cued and v >= max(MIN_SIMILARITY, score - SECOND)]
    # (a label of NOT_A_VALUE is never cued, so never among them)
    return [top, *also]
