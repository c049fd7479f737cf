"""Providers by name: the built-in ones, those registered in code, and entry points.

A package adds a provider without touching memoryd by declaring an entry
point in the ``memoryd.providers`` group::

    [project.entry-points."memoryd.providers"]
    supermemory = "my_package.memory:SupermemoryProvider"

``create_provider`` turns the three ways things go wrong into clear errors:
an unknown name lists the registered ones, a provider whose package is not
installed says which extra installs it, and one that fails to start says why.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
from importlib.metadata import entry_points

from memoryd.agents.providers.base import MemoryProvider, ProviderContext
from memoryd.errors import MemorydError, ValidationError

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "memoryd.providers"
# built-in providers by name, imported only when chosen
BUILTIN: dict[str, str] = {
    "local": "memoryd.agents.providers.local:LocalProvider",
    "remote": "memoryd.agents.providers.remote:RemoteProvider",
    "mem0": "memoryd.agents.providers.mem0:Mem0Provider",
}
_registered: dict[str, type[MemoryProvider]] = {}


class UnknownProviderError(ValidationError):
    """No provider has that name."""

    code = "unknown_provider"


class ProviderUnavailableError(MemorydError):
    """The provider exists but cannot run here: its package is missing, or it failed to start."""

    code = "provider_unavailable"
    prefix = "provider unavailable"
    http_status = 503


def register_provider(name: str, provider: type[MemoryProvider]) -> None:
    """Make ``provider`` available as ``name`` (a later registration replaces an earlier one)."""
    if not isinstance(name, str) or not name.strip():
        raise ValidationError("a provider needs a name")
    if not (isinstance(provider, type) and issubclass(provider, MemoryProvider)):
        raise ValidationError(f"provider {name!r} must be a MemoryProvider subclass")
    _registered[name] = provider


def unregister_provider(name: str) -> None:
    _registered.pop(name, None)


def _entry_points() -> dict[str, str]:
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available_providers() -> list[str]:
    """Every provider name that can be asked for, sorted."""
    return sorted({*BUILTIN, *_entry_points(), *_registered})


def provider_class(name: str) -> type[MemoryProvider]:
    """The class registered as ``name``: code first, then entry points, then built-ins."""
    if name in _registered:
        return _registered[name]
    target = _entry_points().get(name) or BUILTIN.get(name)
    if target is None:
        raise UnknownProviderError(
            f"no memory provider named {name!r}; registered: {', '.join(available_providers())}"
        )
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ProviderUnavailableError(
            f"provider {name!r} ({target}) cannot be imported: {exc}"
        ) from None
    cls = getattr(module, attr, None)
    if not (isinstance(cls, type) and issubclass(cls, MemoryProvider)):
        raise ProviderUnavailableError(f"provider {name!r}: {target} is not a MemoryProvider")
    return cls


def create_provider(name: str, context: ProviderContext) -> MemoryProvider:
    """A started provider, or a clear error saying what to do."""
    cls = provider_class(name)
    missing = [m for m in cls.requires if importlib.util.find_spec(m.split(".")[0]) is None]
    if missing:
        how = (
            f"pip install 'memoryd[{cls.extra}]'"
            if cls.extra
            else f"install the package that provides {', '.join(missing)}"
        )
        raise ProviderUnavailableError(
            f"provider {name!r} needs {', '.join(missing)}, which is not installed: {how}"
        )
    try:
        return cls(context)
    except MemorydError:
        raise
    except Exception as exc:  # a third party's constructor: its failure, said as ours
        raise ProviderUnavailableError(
            f"provider {name!r} failed to start: {type(exc).__name__}: {exc}"
        ) from exc
