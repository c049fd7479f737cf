"""Embedding providers behind one small base class."""

from __future__ import annotations

from memoryd.config import Settings
from memoryd.embed.client import Embedder, Vectors, content_hash, normalize_rows
from memoryd.threads import model_threads

__all__ = ["Embedder", "Vectors", "content_hash", "create_embedder", "normalize_rows"]


def create_embedder(settings: Settings) -> Embedder:
    """The embedder the settings name: the bundled local model unless told otherwise."""
    if settings.embedder == "openai":
        from memoryd.embed.openai import OpenAIEmbedder

        return OpenAIEmbedder(
            model=settings.embed_model,
            base_url=settings.embed_base_url,
            api_key=settings.embed_api_key,
            dimensions=settings.embed_dimensions,
            batch_size=settings.embed_batch_size,
        )
    if settings.embedder == "multilingual":
        from memoryd.embed.multilingual import MultilingualEmbedder

        return MultilingualEmbedder()
    from memoryd.embed.local import LocalEmbedder

    return LocalEmbedder(
        batch_size=settings.embed_batch_size, threads=model_threads(settings.threads)
    )
