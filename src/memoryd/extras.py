"""Optional parts of memoryd and the extra that installs each.

``pip install memoryd`` is the library: add, search, ingest and the command
line on the bundled model. Each door and provider beyond that is an extra
(``pyproject.toml``): ``remote`` (a server's URL), ``llm`` (an LLM, the
OpenAI-compatible embedder, a reranking service), ``pdf``, ``mcp`` and
``server`` (every door). The place that loads one wraps its imports in
:func:`extra`, so a missing library is an error that names the extra to
install, not a bare ``ModuleNotFoundError`` from deep inside a call.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from memoryd.errors import MissingExtraError


@contextmanager
def extra(name: str, purpose: str) -> Iterator[None]:
    """Imports made inside are those of ``memoryd[name]``, needed for ``purpose``."""
    try:
        yield
    except ModuleNotFoundError as exc:
        missing = (exc.name or "a library").split(".")[0]
        raise MissingExtraError(
            f"{purpose} needs memoryd[{name}] ({missing} is not installed): "
            f"pip install 'memoryd[{name}]'"
        ) from None
