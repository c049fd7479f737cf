"""The read path: the 12 stages of hybrid retrieval, one module a stage.

The pipeline's names load on first use (PEP 562): the recipes are plain
settings that a command which never searches reads without loading NumPy
and the stages.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from memoryd.retrieve.config import DEFAULT_RECIPE, SearchConfig, SpaceRef

if TYPE_CHECKING:
    from memoryd.retrieve.pipeline import Retriever, SearchRequest

_PIPELINE = ("Retriever", "SearchRequest")
__all__ = ["DEFAULT_RECIPE", "Retriever", "SearchConfig", "SearchRequest", "SpaceRef"]


def __getattr__(name: str) -> Any:
    if name not in _PIPELINE:
        raise AttributeError(f"module 'memoryd.retrieve' has no attribute {name!r}")
    value = getattr(importlib.import_module("memoryd.retrieve.pipeline"), name)
    globals()[name] = value  # loaded once
    return value
