"""The REST server: the ourmem wire contract over ``MemoryService`` (``memoryd serve``).

``create_app`` is imported on first use, so code that needs only the serve
options (the CLI's other commands) does not load FastAPI.
"""

from typing import TYPE_CHECKING, Any

from memoryd.web.options import ServeOptions

if TYPE_CHECKING:
    from memoryd.server.app import create_app

__all__ = ["ServeOptions", "create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from memoryd.extras import extra

        with extra("server", "the REST server"):
            from memoryd.server.app import create_app

        return create_app
    raise AttributeError(name)
