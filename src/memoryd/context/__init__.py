"""The context engine: in-session compaction with lossless expansion, and 4-layer recall.

See ``docs/context.md``. :class:`ContextEngine` is the one entry point every
door uses.
"""

from memoryd.context.config import ContextConfig
from memoryd.context.engine import ContextEngine

__all__ = ["ContextConfig", "ContextEngine"]
