"""LangGraph on memoryd: the BaseStore contract, and an agent that remembers across runs."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chat_replies import tool_call
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore
from scripted_llm import ScriptedLLM

from memoryd.agents.frameworks.langgraph import MemorydStore
from memoryd.embed.local import LocalEmbedder
from memoryd.sdk import Memory


@pytest.fixture
def memory(home: Path, embedder: LocalEmbedder) -> Iterator[Memory]:
    mem = Memory(home, embedder=embedder)
    yield mem
    mem.close()


def test_the_store_keeps_items_by_namespace_and_key(memory: Memory) -> None:
    store = MemorydStore(memory)
    alice, bob = ("memories", "alice"), ("memories", "bob")
    store.put(alice, "drink", {"content": "Alice prefers dark roast coffee.", "weight": 1})
    store.put(bob, "drink", {"content": "Bob drinks green tea.", "weight": 2})
    store.put(alice, "city", {"content": "Alice lives in Porto."})
    item = store.get(alice, "drink")
    assert item is not None and item.value == {
        "content": "Alice prefers dark roast coffee.",
        "weight": 1,
    }
    assert (item.namespace, item.key) == (alice, "drink")
    found = store.search(alice, query="what coffee does she like")
    assert found[0].key == "drink" and found[0].score is not None
    assert {i.key for i in found} <= {"drink", "city"}  # never bob's
    assert [i.value["weight"] for i in store.search(("memories",), filter={"weight": 2})] == [2]
    assert store.list_namespaces(prefix=("memories",)) == [alice, bob]
    assert store.list_namespaces(max_depth=1) == [("memories",)]
    # a new value of a key supersedes the old one, which stays in memoryd's history
    old = memory.list(tags=["langgraph"], limit=10)
    store.put(alice, "drink", {"content": "Alice now prefers oat milk lattes.", "weight": 1})
    item = store.get(alice, "drink")
    assert item is not None and item.value["content"] == "Alice now prefers oat milk lattes."
    first = next(m for m in old if m.content == "Alice prefers dark roast coffee.")
    assert memory.get(first.id).superseded_by is not None
    assert any(row["action"] != "create" for row in memory.history(first.id))
    # the same words with another value is a new value too
    store.put(alice, "city", {"content": "Alice lives in Porto.", "since": 2024})
    city = store.get(alice, "city")
    assert city is not None and city.value == {"content": "Alice lives in Porto.", "since": 2024}
    store.delete(alice, "city")
    assert store.get(alice, "city") is None
    assert [i.key for i in store.search(alice)] == ["drink"]


NAMESPACE = "memories"


def remember(content: str) -> str:
    """Remember a durable fact about the user for later conversations."""
    return content


def build_agent(llm_url: str, store: BaseStore) -> CompiledStateGraph[Any, Any, Any, Any]:
    """LangGraph's long-term memory pattern: recall from the store into the system prompt,
    and a tool the model calls to save a memory into it."""
    model = ChatOpenAI(model="scripted", base_url=llm_url, api_key="test").bind_tools([remember])

    def agent(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> dict[str, Any]:
        namespace = (NAMESPACE, config["configurable"]["user_id"])
        asked = next(m for m in reversed(state["messages"]) if isinstance(m, HumanMessage))
        found = store.search(namespace, query=str(asked.content), limit=5)
        known = "\n".join(f"- {item.value['content']}" for item in found) or "(nothing yet)"
        system = SystemMessage(f"You are a helpful assistant. You remember:\n{known}")
        return {"messages": [model.invoke([system, *state["messages"]])]}

    def save(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> dict[str, Any]:
        namespace = (NAMESPACE, config["configurable"]["user_id"])
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        replies = []
        for call in last.tool_calls:
            store.put(namespace, uuid.uuid4().hex, {"content": call["args"]["content"]})
            replies.append(ToolMessage("saved", tool_call_id=call["id"]))
        return {"messages": replies}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "save" if isinstance(last, AIMessage) and last.tool_calls else END

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("save", save)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["save", END])
    builder.add_edge("save", "agent")
    return builder.compile(store=store)


def test_a_langgraph_agent_remembers_across_two_runs(home: Path, embedder: LocalEmbedder) -> None:
    config: RunnableConfig = {"configurable": {"user_id": "alice"}}
    with ScriptedLLM() as llm:
        llm.script(
            tool_call("remember", {"content": "The user prefers dark roast coffee."}),
            "Noted, dark roast.",
        )
        with Memory(home, embedder=embedder) as first:
            graph = build_agent(llm.url, MemorydStore(first))
            graph.invoke({"messages": [HumanMessage("Remember: I like dark roast.")]}, config)
        assert len(llm.chat_requests) == 2
        llm.script("Dark roast, as you like it.")
        with Memory(home, embedder=embedder) as second:  # a new process, the same home
            graph = build_agent(llm.url, MemorydStore(second))
            out = graph.invoke({"messages": [HumanMessage("Which coffee should I buy?")]}, config)
        system = llm.chat_requests[2].messages[0]["content"]
    assert "The user prefers dark roast coffee." in system
    assert out["messages"][-1].content == "Dark roast, as you like it."
    # another user of the same store recalls nothing of alice's
    with ScriptedLLM() as llm, Memory(home, embedder=embedder) as third:
        llm.script("Hello.")
        graph = build_agent(llm.url, MemorydStore(third))
        other: RunnableConfig = {"configurable": {"user_id": "bob"}}
        graph.invoke({"messages": [HumanMessage("Which coffee should I buy?")]}, other)
        assert "dark roast" not in llm.chat_requests[0].messages[0]["content"]


def test_the_store_works_from_async_graphs(memory: Memory) -> None:
    store = MemorydStore(memory)

    async def roundtrip() -> list[str]:
        await store.aput(("notes",), "a", {"text": "The deploy runs on Fridays."})
        item = await store.aget(("notes",), "a")
        assert item is not None and item.value == {"text": "The deploy runs on Fridays."}
        return [i.key for i in await store.asearch(("notes",), query="when is the deploy")]

    assert asyncio.run(roundtrip()) == ["a"]
