"""Consolidation with an LLM: D5 → D2 → D1 → D0 asked of the model (the scripted stand-in),
each from the right source; a failed answer falls back to extraction for that layer only;
the layers and consolidation are reachable over REST and MCP."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
for folder in ("llm", "server", "mcp"):
    if str(TESTS / folder) not in sys.path:
        sys.path.insert(0, str(TESTS / folder))

from scripted_llm import Recorded, Reply, ScriptedLLM  # noqa: E402
from server_harness import create_tenant, start_server  # noqa: E402

from memoryd.continuity import Continuity, Message, Owner  # noqa: E402
from memoryd.continuity.layers import EXCHANGES, GIST, OUTLINE, THEMES, SessionLayers  # noqa: E402
from memoryd.continuity.service import event_data  # noqa: E402
from memoryd.embed.local import LocalEmbedder  # noqa: E402
from memoryd.errors import ForbiddenError  # noqa: E402
from memoryd.llm.openai_compat import OpenAICompatibleLLM  # noqa: E402
from memoryd.prompts.continuity import LAYER_SYSTEM  # noqa: E402
from memoryd.service import MemoryService  # noqa: E402

ANSWERS = {
    "outline": "Goal: VAT lookup by country. Steps: table keyed by code; rounding fixed.",
    "gist": "Fixed the billing VAT lookup by country code and the invoice rounding.",
    "themes": "billing, VAT, rounding",
}


def form(request: Recorded) -> str:
    user = request.messages[1]["content"]
    assert request.messages[0]["content"] == LAYER_SYSTEM
    return str(user.split("\n", 1)[0].removeprefix("FORM: "))


def session_events() -> list[Message]:
    events = []
    for i in range(12):
        events.append(Message("user", f"Turn {i}: fix the billing VAT lookup for country {i}"))
        events.append(Message("assistant", f"Looked up VAT for country {i}; rounding checked."))
    return events


@pytest.fixture
def service(tmp_path: Path, embedder: LocalEmbedder) -> Iterator[MemoryService]:
    svc = MemoryService(tmp_path / "home", embedder=embedder)
    Continuity(svc, llm=None).save(Owner("coder", "s-vat", "/repo"), session_events())
    yield svc
    svc.close()


def test_each_kept_layer_is_the_models_answer_from_the_right_source(
    service: MemoryService,
) -> None:
    with ScriptedLLM(lambda r: json.dumps({"text": ANSWERS[form(r)]})) as llm:
        layers = SessionLayers(service, llm=OpenAICompatibleLLM("scripted", llm.url))
        done = {int(r["depth"]): r for r in layers.consolidate("coder", "s-vat")}
        asked = {form(r): r.messages[1]["content"] for r in llm.chat_requests}
    assert set(asked) == {"outline", "gist", "themes"}
    d5 = service.store.layer(service.tenant_id, "coder", "s-vat", EXCHANGES)
    assert d5 is not None
    assert asked["outline"].endswith(str(d5["content"]))  # D2 from D5
    for name in ("gist", "themes"):  # D1 and D0 from the model's outline
        assert asked[name].endswith(str(done[OUTLINE]["content"]))
    for depth, name in ((OUTLINE, "outline"), (GIST, "gist"), (THEMES, "themes")):
        assert str(done[depth]["content"]).endswith(ANSWERS[name])
        assert str(done[depth]["content"]).startswith(("Outline of", "Gist of", "Themes of"))
    gist = service.get(str(done[GIST]["memory_id"]))
    assert gist.session_id == "s-vat" and gist.scope == "agent/coder"
    found = service.search("what did we do on the VAT lookup", limit=5).results
    assert gist.id in {r.memory.id for r in found}


def test_a_failed_answer_costs_that_layer_its_model_text_only(service: MemoryService) -> None:
    def respond(request: Recorded) -> Reply | str:
        if form(request) == "gist":
            return Reply(status=500)
        return json.dumps({"text": ANSWERS[form(request)]})

    with ScriptedLLM(respond) as llm:
        layers = SessionLayers(service, llm=OpenAICompatibleLLM("scripted", llm.url))
        done = {int(r["depth"]): r for r in layers.consolidate("coder", "s-vat")}
    assert str(done[OUTLINE]["content"]).endswith(ANSWERS["outline"])
    assert str(done[THEMES]["content"]).endswith(ANSWERS["themes"])
    gist = str(done[GIST]["content"])
    assert gist.startswith("Gist of session s-vat") and ANSWERS["gist"] not in gist
    assert all(r["memory_id"] for r in done.values())  # every layer is still remembered


def test_an_agent_reads_its_own_sessions_layers_only(service: MemoryService) -> None:
    SessionLayers(service, llm=None).consolidate("coder", "s-vat")
    coder = SessionLayers(service.for_agent("coder"), llm=None).layers()
    assert {int(r["depth"]) for r in coder} == {EXCHANGES, OUTLINE, GIST, THEMES}
    assert SessionLayers(service.for_agent("reviewer"), llm=None).layers() == []
    with pytest.raises(ForbiddenError):
        SessionLayers(service.for_agent("reviewer"), llm=None).layers(agent_id="coder")
    gist = next(r for r in coder if int(r["depth"]) == GIST)
    reviewer = service.for_agent("reviewer").search("billing VAT lookup", limit=20).results
    assert str(gist["memory_id"]) not in {r.memory.id for r in reviewer}


def test_rest_lists_layers_and_consolidates_with_the_configured_llm(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    with ScriptedLLM(lambda r: json.dumps({"text": ANSWERS[form(r)]})) as llm:
        server, stop = start_server(
            tmp_path / "home", embedder, llm_base_url=llm.url, llm_model="scripted"
        )
        try:
            _, key = create_tenant(server, "layers")
            with server.client(key, **{"X-Agent-Id": "coder"}) as http:
                events = [event_data(e) for e in session_events()]
                saved = http.post(
                    "/v1/checkpoints",
                    json={"session_id": "s-vat", "events": events, "summarize": False},
                )
                assert saved.status_code == 201, saved.text
                done = http.post("/v1/session-layers/consolidate", json={})
                assert done.json() == {"consolidated": 1}
                layers = http.get("/v1/session-layers").json()["layers"]
                other = http.get("/v1/session-layers", headers={"X-Agent-Id": "reviewer"})
                refused = http.get(
                    "/v1/session-layers",
                    params={"agent_id": "coder"},
                    headers={"X-Agent-Id": "reviewer"},
                )
        finally:
            stop()
    depths = {layer["depth"]: layer for layer in layers}
    assert set(depths) == {0, 1, 2, 5}
    assert depths[1]["content"].endswith(ANSWERS["gist"])
    assert other.json() == {"layers": []}
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
