"""Statements read on many threads at once (a server's requests) read as they do alone."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from memoryd.text.statements import value_words

TEXTS = [
    "I started working as a structural engineer at Arup last spring",
    "We relocated to Rotterdam and bought an apartment near the harbour",
    "Switched my editor to Helix after years of Neovim configuration",
    "My daughter's swimming lessons moved to Thursday evenings",
    "I am training for the Amsterdam marathon with interval runs",
    "Ordering groceries from Picnic instead of the supermarket now",
]


def test_many_threads_get_the_words_one_thread_gets() -> None:
    alone = [value_words(t) for t in TEXTS]
    with ThreadPoolExecutor(8) as pool:
        for _ in range(40):
            together = list(pool.map(value_words, TEXTS * 50))
            assert together == alone * 50
