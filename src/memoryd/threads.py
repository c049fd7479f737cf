"""How many threads memoryd's native libraries may use, from ``MEMORYD_THREADS``.

On a small machine a search shares the cores with SQLite, the embedding model,
other requests and other server workers. NumPy's BLAS starts one thread per
core for every matrix product, and on a busy 2-core machine those threads wait
on each other: one BLAS thread made a search's store part 2–3× faster (p50
18.2 → 6.9 ms at 10k memories) and one-by-one adds 2.5× faster. memoryd's
matrix products are small and many (one query against a block of vectors), so
its parallelism is between requests, not inside one product: BLAS gets one
thread. The embedding model (onnxruntime) is the one place one call is worth
several cores; it gets ``MEMORYD_THREADS``, by default the machine's cores up
to four.

BLAS reads its thread count once, when NumPy is first imported, so
:func:`limit_blas` runs at the very start of the ``memoryd`` command (and of
``python -m bench``); a program that embeds memoryd sets
``OPENBLAS_NUM_THREADS=1`` itself, or calls :func:`limit_blas` before it
imports NumPy. A variable the user set is never overridden.
"""

from __future__ import annotations

import os

MAX_DEFAULT = 4
# every BLAS NumPy may be built with reads one of these at load time
BLAS_VARIABLES = (
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)


def cores() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def model_threads(chosen: int | None = None) -> int:
    """Threads for one call of the embedding model: ``MEMORYD_THREADS``, else cores ≤ 4."""
    return chosen or min(cores(), MAX_DEFAULT)


# searches run at once on each core, when all of a search runs here (its model local, no
# reranker over the network): more only take turns on the cores, and each one's time grows
# with the others' (on 2 cores, 64 clients: 64-73 requests a second unbounded, 76-77 with
# two a core; docs/benchmarks.md)
SEARCHES_PER_CORE = 2


def search_slots() -> int:
    """Searches that may run at once in one process: two a core; the rest wait their turn."""
    return SEARCHES_PER_CORE * cores()


def limit_blas() -> None:
    """One BLAS thread, unless the user chose otherwise; before NumPy is imported."""
    for name in BLAS_VARIABLES:
        os.environ.setdefault(name, "1")
