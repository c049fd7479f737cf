"""Two processes on one home: each sees the other's writes (index catch-up by ``seq``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from childproc import Child

from memoryd.embed.local import LocalEmbedder
from memoryd.models import State
from memoryd.service import MemoryService
from memoryd.store.database import migration_scripts

BACKGROUND = [
    "I prefer dark roast coffee in the morning",
    "My sister lives in Lisbon",
    "I work as a nurse at the city hospital",
    "I play tennis every Saturday",
]


def _ids(svc: MemoryService, query: str) -> list[str]:
    return [r.memory.id for r in svc.search(query, touch=False).results]


def test_parent_service_sees_child_writes_updates_and_deletes(
    home: Path, embedder: LocalEmbedder, spawn: Callable[[Path], Child]
) -> None:
    svc = MemoryService(home, embedder=embedder)
    try:
        kept = [svc.add(text).id for text in BACKGROUND]
        # the parent's index is built (and its seq recorded) before the child writes
        assert _ids(svc, "what is the dog called")
        child = spawn(home)
        child.wait_ready()

        dog = child.request("add", content="The user's dog is named Biscuit")
        assert _ids(svc, "what is the dog called")[0] == dog
        assert svc.get(dog).content == "The user's dog is named Biscuit"

        # an update by the child replaces the vector the parent searches
        child.request(
            "update", memory_id=kept[1], content="My sister moved to Tokyo and teaches English"
        )
        assert _ids(svc, "which city does my sister live in now, Tokyo")[0] == kept[1]
        assert svc.get(kept[1]).content.startswith("My sister moved to Tokyo")

        # a delete by the child drops the memory from the parent's results
        child.request("delete", memory_id=dog)
        assert dog not in _ids(svc, "what is the dog called")
        assert svc.get(dog).state is State.DELETED
        child.close()
    finally:
        svc.close()


def test_child_searching_in_a_loop_sees_parent_writes(
    home: Path, embedder: LocalEmbedder, spawn: Callable[[Path], Child]
) -> None:
    svc = MemoryService(home, embedder=embedder)
    try:
        for text in BACKGROUND:
            svc.add(text)
        child = spawn(home)
        child.wait_ready()
        assert child.request("search", query="what is the dog called")  # child index built
        child.send("search_until", query="what is the dog called", needle="Biscuit", timeout=30)
        # the parent writes while the child is searching
        for text in ("I drive a blue hatchback", "My favourite film is Alien"):
            svc.add(text)
            time.sleep(0.05)
        dog = svc.add("The user's dog is named Biscuit").id
        reply = child.recv(timeout=40)
        assert reply.get("ok") == dog, reply
        # the child's own view of the parent's memory is complete
        assert child.request("get", memory_id=dog) == {
            "content": "The user's dog is named Biscuit",
            "state": "active",
        }
    finally:
        svc.close()


def test_parent_searching_in_a_loop_sees_child_writes(
    home: Path, embedder: LocalEmbedder, spawn: Callable[[Path], Child]
) -> None:
    svc = MemoryService(home, embedder=embedder)
    try:
        for text in BACKGROUND:
            svc.add(text)
        assert _ids(svc, "what is my cat called")
        child = spawn(home)
        child.wait_ready()
        child.send(
            "add_many",
            contents=[
                "I am allergic to peanuts",
                "My passport expires in March",
                "My cat is called Pixel",
            ],
            pause=0.05,
        )
        deadline = time.monotonic() + 30
        found = None
        while found is None and time.monotonic() < deadline:
            for r in svc.search("what is my cat called", touch=False).results:
                if "Pixel" in r.memory.content:
                    found = r.memory.id
        ids = child.recv()["ok"]
        assert found is not None, "the parent never saw the child's write"
        assert found == ids[2]
    finally:
        svc.close()


def test_two_processes_create_the_same_fresh_store_at_once(
    home: Path, embedder: LocalEmbedder, spawn: Callable[[Path], Child]
) -> None:
    # both children migrate, bind the model and write on a home that did not exist
    first, second = spawn(home), spawn(home)
    first.wait_ready()
    second.wait_ready()
    first.send("add_many", contents=[f"first process fact {i}" for i in range(5)])
    second.send("add_many", contents=[f"second process fact {i}" for i in range(5)])
    ids = first.recv()["ok"] + second.recv()["ok"]
    with MemoryService(home, embedder=embedder) as svc:
        rows, total = svc.list_memories(limit=100)
        assert total == 10
        assert {m.id for m in rows} == set(ids)
        assert svc.store.conn.execute("PRAGMA user_version").fetchone()[0] == len(
            migration_scripts()
        )
        assert svc.stats()["embedding_model"] == embedder.name
