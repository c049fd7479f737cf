"""``mem0``: mem0's open-source ``Memory`` as a provider, on this machine, offline.

mem0 keeps the memories in a local Qdrant collection (files under the
profile's home, ``mem0/``) and its history in SQLite beside it. Texts are
embedded by memoryd's bundled model, handed to mem0 through its
``langchain`` embedder provider, so nothing is downloaded. Extraction is
mem0's own, by the LLM memoryd is configured with (``MEMORYD_LLM_*``) or
the one in ``options["llm"]`` (a mem0 LLM config); without one, turns are
stored as they were said (mem0's ``infer=False``).

Options: ``user_id`` (default: the profile's name, else ``"default"``),
``llm``. mem0's telemetry is off unless ``MEM0_TELEMETRY`` says otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memoryd.agents.providers.base import MemoryHit, MemoryProvider, ProviderContext
from memoryd.embed import Embedder
from memoryd.errors import ValidationError
from memoryd.models import parse_ts

OPTIONS = frozenset(("user_id", "llm"))
FOLDER = "mem0"
COLLECTION = "memoryd"
# an LLM config mem0 accepts while memoryd tells it not to call the LLM (infer=False)
UNUSED_LLM = {"provider": "openai", "config": {"model": "unused", "api_key": "unused"}}


def bridge(embedder: Embedder) -> Any:
    """memoryd's embedder as a LangChain ``Embeddings``, the interface mem0 takes."""
    from langchain_core.embeddings import Embeddings

    class MemorydEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[float(x) for x in v] for v in embedder.embed(texts)]

        def embed_query(self, text: str) -> list[float]:
            return self.embed_documents([text])[0]

    return MemorydEmbeddings()


class Mem0Provider(MemoryProvider):
    name = "mem0"
    requires = ("mem0", "langchain", "qdrant_client")
    extra = "mem0"

    def __init__(self, context: ProviderContext) -> None:
        super().__init__(context)
        unknown = sorted(set(context.options) - OPTIONS)
        if unknown:
            raise ValidationError(
                f"unknown option(s) {', '.join(unknown)} for the mem0 provider; "
                f"it takes {', '.join(sorted(OPTIONS))}"
            )
        os.environ.setdefault("MEM0_TELEMETRY", "False")  # read when mem0 is first imported
        from mem0 import Memory

        from memoryd.config import load_settings

        embedder = context.embedder
        if embedder is None:
            from memoryd.embed.local import LocalEmbedder

            embedder = LocalEmbedder()
        llm = context.options.get("llm")
        if llm is None:
            settings = load_settings(context.home)
            if settings.llm_base_url and settings.llm_model:
                llm = {
                    "provider": "openai",
                    "config": {
                        "model": settings.llm_model,
                        "api_key": settings.llm_api_key or "none",
                        "openai_base_url": settings.llm_base_url,
                    },
                }
        self.infer = llm is not None
        folder = context.home / FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        self.user_id = str(context.options.get("user_id") or context.profile or "default")
        self.memory = Memory.from_config(
            {
                "vector_store": {
                    "provider": "qdrant",
                    "config": {
                        "path": str(folder / "qdrant"),
                        "on_disk": True,
                        "collection_name": COLLECTION,
                        "embedding_model_dims": embedder.dim,
                    },
                },
                "embedder": {"provider": "langchain", "config": {"model": bridge(embedder)}},
                "llm": llm or UNUSED_LLM,
                "history_db_path": str(folder / "history.db"),
            }
        )

    def _hit(self, found: dict[str, Any]) -> MemoryHit:
        metadata = found.get("metadata") or {}
        created = found.get("created_at")
        return MemoryHit(
            id=str(found["id"]),
            content=str(found.get("memory") or ""),
            score=float(found.get("score") or 0.0),
            created_at=parse_ts(created) if isinstance(created, str | datetime) else None,
            session_id=metadata.get("session_id"),
            turn=not self.infer,  # without extraction, what mem0 holds are the turns
        )

    def search(self, query: str, *, limit: int) -> list[MemoryHit]:
        found = self.memory.search(query, top_k=limit, filters={"user_id": self.user_id})
        return [self._hit(r) for r in found.get("results", [])]

    def remember(
        self, content: str, *, tags: Sequence[str] = (), replaces: str | None = None
    ) -> MemoryHit:
        if replaces is not None:
            self.memory.update(replaces, content)
            return MemoryHit(id=replaces, content=content)
        added = self.memory.add(
            content, user_id=self.user_id, infer=False, metadata={"tags": list(tags)}
        )
        results = added.get("results", [])
        if not results:
            raise ValidationError("mem0 stored nothing for this content")
        return MemoryHit(id=str(results[0]["id"]), content=content)

    def forget(self, memory_id: str) -> None:
        self.memory.delete(memory_id)

    def capture(self, messages: Sequence[dict[str, str]], *, session_id: str) -> None:
        """mem0 extracts while it adds: when this returns, the memories are there."""
        self.memory.add(
            list(messages),
            user_id=self.user_id,
            infer=self.infer,
            metadata={"session_id": session_id},
        )

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        return list(self.memory.history(memory_id))

    def close(self) -> None:
        self.memory.close()
        client = getattr(getattr(self.memory, "vector_store", None), "client", None)
        if client is not None:  # the local Qdrant store holds a lock on its folder until closed
            client.close()
