"""The REST server: the ourmem wire contract over ``MemoryService`` (``memoryd serve``)."""

from memoryd.server.app import ServeOptions, create_app

__all__ = ["ServeOptions", "create_app"]
