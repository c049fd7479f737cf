"""A demo home: one person's changing life, seeded through memoryd's REST API.

The README's screenshots (``scripts/dashboard_screenshots.py``) and the
dashboard's page sweep (``tests/dashboard/test_dashboard_sweep.py``) both
seed a home with this module, so what the docs show is what the tests open:
a long row, Chinese text, facts that were superseded as a life moved on, a
distilled conversation and a raw one, a team space shared with a second
tenant, memories written by two agents, and a finished import. Everything
goes through the public API of a running server (no store access), so the
seeded home is one a real client could have made.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

import httpx

# agents that wrote memories, for the agent filter
CODING_AGENT = "claude-code"
CHAT_AGENT = "openclaw"
TEAM_SPACE_NAME = "Tidal Labs"
# who Mei is stays in every prompt; how she works, when it applies; the rest when asked
TIERS = {"profile": "core", "preferences": "working", "patterns": "working"}
LONG_NOTE = (
    "Recipe for my grandmother's braised pork: two kilos of pork belly cut into squares, "
    "blanched for five minutes, then browned in rock sugar until amber, with Shaoxing wine, "
    "light and dark soy sauce, star anise, cinnamon and a little ginger, simmered for ninety "
    "minutes on the lowest flame and reduced at the end until the sauce coats the back of a "
    "spoon; serve it with plain rice and blanched greens, never with noodles."
)
# (content, category, tags, agent): the life as it stands, oldest first
MEMORIES: list[tuple[str, str, list[str], str | None]] = [
    ("My name is Mei Lin; friends call me Mei", "profile", ["identity"], None),
    ("I was born in Hangzhou and grew up speaking Mandarin and English", "profile", [], None),
    ("每年春节我们都回杭州看望父母", "events", ["family"], None),
    ("I am allergic to peanuts", "profile", ["health"], None),
    ("I prefer dark roast coffee, no sugar", "preferences", ["coffee"], None),
    ("I like window seats on long flights", "preferences", ["travel"], CHAT_AGENT),
    ("我喜欢周末去海边跑步", "preferences", ["running"], CHAT_AGENT),
    ("Use pnpm, not npm, in the billing repository", "preferences", ["billing"], CODING_AGENT),
    ("Run the test suite with `make test` before every push", "patterns", [], CODING_AGENT),
    ("Review pull requests in the morning, write code in the afternoon", "patterns", [], None),
    ("Tom Okafor leads the payments team at Tidal Labs", "entities", ["work"], None),
    ("Our daughter Ana loves drawing dragons", "entities", ["family"], None),
    (
        "The billing service retries webhooks 5 times with exponential backoff",
        "entities",
        ["billing"],
        CODING_AGENT,
    ),
    (
        "The staging database is refreshed from production every Sunday at 02:00",
        "entities",
        ["infra"],
        CODING_AGENT,
    ),
    ("Ana starts at the international school in September", "events", ["family"], None),
    ("Ran the Porto half marathon in 1:52", "events", ["running"], CHAT_AGENT),
    (
        "Decided to ship the invoice export on Friday after QA signs off",
        "cases",
        ["billing"],
        CODING_AGENT,
    ),
    (
        "Fixed the duplicate-charge bug by making the webhook handler idempotent",
        "cases",
        ["billing"],
        CODING_AGENT,
    ),
    ("在波尔图找到了一家很好的中餐馆，叫“小上海”", "events", ["food"], CHAT_AGENT),
    ("I am learning Portuguese twice a week with a tutor", "events", ["language"], None),
    (LONG_NOTE, "entities", ["cooking", "family"], None),
    ("Book the car inspection before the end of June", "events", ["car"], CHAT_AGENT),
]
# (what was true, what replaced it): the life moving on, each kept as versions
CHANGES: list[tuple[tuple[str, str, list[str]], str]] = [
    (("I live in Lyon", "profile", ["home"]), "I moved to Porto in March with my family"),
    (
        ("I work as a data analyst at Banque Rhône", "profile", ["work"]),
        "I joined Tidal Labs as a backend engineer on the payments team",
    ),
    (("I drive a 2012 Peugeot 208", "entities", ["car"]), "I sold the Peugeot and cycle to work"),
]
# shared into the team space by its owner
SHARED = ("Tom Okafor leads", "The billing service retries", "Decided to ship the invoice")
TEAMMATE_MEMORY = "The payments on-call rotation changes every Monday at 10:00"
CONVERSATION = [
    {"role": "user", "content": "We are flying to Hangzhou for the Spring Festival in February"},
    {"role": "assistant", "content": "Noted. Do you want a window seat again?"},
    {"role": "user", "content": "Yes please, and I am allergic to peanuts, so no snack box"},
    {"role": "assistant", "content": "Window seat, no peanuts. I will keep that in mind."},
]
CHINESE_CONVERSATION = [
    {"role": "user", "content": "下周六我们去杜罗河谷徒步，记得提醒我带雨衣"},
    {"role": "assistant", "content": "好的，周五晚上提醒你带雨衣。"},
]
NOTES_FILE = b"""The residence permit appointment is at the AIMA office on Rua do Bolhao.
Bring the rental contract and three passport photos.

Ana's school starts at 08:45; the bus stops at Praca da Republica.

Tidal Labs pays on the 25th of each month into the Portuguese account.
"""


@dataclass
class DemoHome:
    """The seeded home: keys to sign in with and the dashboard paths worth opening."""

    url: str
    key: str  # Mei's, the person whose dashboard is shown
    teammate_key: str
    team_space: str
    paths: dict[str, str] = field(default_factory=dict)


def seed_demo_home(url: str, timeout_s: float = 120.0) -> DemoHome:
    """Two tenants on the server at ``url`` (tenant creation open, as on loopback) and
    Mei's life in memories; returns once every background task of it has finished."""
    _, mei_key = _tenant(url, "Mei Lin")
    tom_id, tom_key = _tenant(url, "Tom Okafor")
    with (
        httpx.Client(base_url=url, headers={"X-API-Key": mei_key}, timeout=60) as mei,
        httpx.Client(base_url=url, headers={"X-API-Key": tom_key}, timeout=60) as tom,
    ):
        made: dict[str, str] = {}
        for old, new in CHANGES:
            content, category, tags = old
            was = _ok(mei.post("/v1/memories", json=_memory(content, category, tags)))["id"]
            made.setdefault("old", was)
            now = _ok(
                mei.post("/v1/memories", json={**_memory(new, category, tags), "replaces": was})
            )
            made.setdefault("memory", now["id"])
        for content, category, tags, agent in MEMORIES:
            made[content] = _ok(
                mei.post("/v1/memories", json=_memory(content, category, tags, agent))
            )["id"]
        coffee = made["I prefer dark roast coffee, no sugar"]
        _ok(mei.put(f"/v1/memories/{coffee}", json={"content": "I prefer light roast coffee now"}))

        chat = _ok(
            mei.post(
                "/v1/memories",
                json={
                    "messages": CONVERSATION,
                    "session_id": "trip-to-hangzhou",
                    "agent_id": CHAT_AGENT,
                },
            )
        )
        _ok(
            mei.post(
                "/v1/memories",
                json={
                    "messages": CHINESE_CONVERSATION,
                    "session_id": "杜罗河谷-徒步",
                    "agent_id": CHAT_AGENT,
                    "mode": "raw",
                },
            )
        )
        _wait(lambda: _ok(mei.get(f"/v1/tasks/{chat['task_id']}")), timeout_s)

        team = _ok(mei.post("/v1/spaces", json={"name": TEAM_SPACE_NAME, "space_type": "team"}))
        space = team["id"]
        _ok(mei.post(f"/v1/spaces/{space}/members", json={"user_id": tom_id, "role": "member"}))
        _ok(tom.post(f"/v1/invitations/{quote(space, safe='')}/accept"))
        for start in SHARED:
            mine = next(i for c, i in made.items() if c.startswith(start))
            _ok(mei.post(f"/v1/memories/{mine}/share", json={"target_space": space}))
        theirs = _ok(tom.post("/v1/memories", json=_memory(TEAMMATE_MEMORY, "events", ["on-call"])))
        _ok(tom.post(f"/v1/memories/{theirs['id']}/share", json={"target_space": space}))

        upload = _ok(mei.post("/v1/imports", files={"file": ("moving-to-porto.txt", NOTES_FILE)}))
        _wait(lambda: _ok(mei.get(f"/v1/imports/{upload['id']}")), timeout_s)

    return DemoHome(
        url=url,
        key=mei_key,
        teammate_key=tom_key,
        team_space=space,
        paths={
            "memory": f"/memories/{made['memory']}",
            "old": f"/memories/{made['old']}",
            "edit": f"/memories/{made['memory']}/edit",
            "coffee": f"/memories/{coffee}",
            "conversation": "/conversations/trip-to-hangzhou",
            "chinese conversation": f"/conversations/{quote('杜罗河谷-徒步', safe='')}",
            "import": f"/imports/{upload['id']}",
            "team memories": "/?" + urlencode({"space_id": space}),
            "agent memories": "/?" + urlencode({"agent_id": CODING_AGENT}),
        },
    )


def _memory(
    content: str, category: str, tags: list[str], agent: str | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {"content": content, "category": category, "tags": tags}
    if category in TIERS:
        body["tier"] = TIERS[category]
    if agent is not None:
        body["agent_id"] = agent
    return body


def _tenant(url: str, name: str) -> tuple[str, str]:
    """A tenant made the way anyone on loopback makes one: its id and API key."""
    made = _ok(httpx.post(f"{url}/v1/tenants", json={"name": name}, timeout=60))
    return str(made["id"]), str(made["api_key"])


def _ok(response: httpx.Response) -> dict[str, Any]:
    """The JSON of a successful answer; a seeding step that fails says which, at once."""
    if response.status_code >= 400:
        raise RuntimeError(
            f"{response.request.method} {response.request.url.path}: "
            f"{response.status_code} {response.text[:300]}"
        )
    body: dict[str, Any] = response.json()
    return body


def _wait(fetch: Callable[[], dict[str, Any]], timeout_s: float) -> dict[str, Any]:
    """Poll a task or an import until it has finished; it must have completed."""
    deadline = time.monotonic() + timeout_s
    while (task := fetch())["status"] not in ("completed", "failed"):
        if time.monotonic() > deadline:
            raise TimeoutError(f"still {task['status']} after {timeout_s:.0f} s: {task}")
        time.sleep(0.05)
    if task["status"] != "completed":
        raise RuntimeError(f"a seeding task failed: {task.get('errors')}")
    return task
