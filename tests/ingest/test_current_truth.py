"""One current truth: a change said naturally retires what it changes, in every door.

Each case is a sequence a user really says (direct adds through the SDK and
smart ingest of conversations), and each check reads the store the way a
door does: search, the current list (the hooks' recent memories), the
profile, consolidation, a dated chat import.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memoryd.embed.local import LocalEmbedder
from memoryd.hooks import session_start
from memoryd.hooks.backend import EmbeddedBackend
from memoryd.hooks.config import HookConfig
from memoryd.imports.formats import chatgpt_conversation
from memoryd.ingest.rules import extract_facts
from memoryd.models import MENTION_MARK, OTHER_MARK, Category, Status
from memoryd.omniroute import health
from memoryd.sdk import Memory
from memoryd.store import MemoryFilter


@pytest.fixture
def mem(tmp_path: Path, embedder: LocalEmbedder) -> Memory:
    memory = Memory(tmp_path / "home", embedder=embedder)
    yield memory  # type: ignore[misc]
    memory.close()


def current(mem: Memory) -> list[str]:
    return [m.content for m in mem.list(current=True, limit=100)]


@pytest.mark.parametrize(
    ("said", "now"),
    [
        (
            [
                "I work as a nurse at Northwestern hospital",
                "I now work as a software engineer at Amazon",
                "I quit Amazon and joined a startup called Nimbus as CTO",
            ],
            "Nimbus",
        ),
        (["I am vegetarian", "I switched to a vegan diet"], "vegan"),
        (["我喜欢吃川菜", "我不再喜欢川菜了，现在喜欢粤菜"], "粤菜"),
        (["I live in Chicago", "I live in Denver", "我现在住在北京"], "北京"),
        (["I drive a Honda Civic", "Traded the Civic in and got a Tesla Model 3"], "Tesla"),
    ],
)
def test_a_change_in_other_words_leaves_one_current_value(
    mem: Memory, said: list[str], now: str
) -> None:
    added = [mem.add(text) for text in said]
    assert current(mem) == [said[-1]]
    assert now in said[-1]
    assert all(mem.get(m.id).status is Status.SUPERSEDED for m in added[:-1])
    assert all(mem.get(m.id).superseded_by is not None for m in added[:-1])


@pytest.mark.parametrize(
    "said",
    [
        ["My name is Mei Lin; friends call me Mei", "Ana, my daughter, loves drawing dragons"],
        ["I moved to Porto in March with my family", "我的家人都住在杭州，每年春节回家"],
        ["My family lives in Leeds", "I rent a flat in Glasgow"],
    ],
)
def test_a_statement_of_something_else_retires_nothing(mem: Memory, said: list[str]) -> None:
    """A name is not a partner, a lone word is no statement, and the family's home is
    theirs: none of these is a new value of what the user said before."""
    for text in said:
        mem.add(text)
    assert sorted(current(mem)) == sorted(said)


def test_a_liking_beside_another_and_a_plan_replace_nothing(mem: Memory) -> None:
    mem.add("I like green tea")
    mem.add("I like coffee")
    mem.add("I live in Denver")
    mem.add("I'm thinking about moving to Tacoma next year")
    mem.add("My coffee grinder is a burr grinder")
    assert len(current(mem)) == 5


def test_another_persons_fact_stays_theirs_and_ranks_below_the_users(mem: Memory) -> None:
    sister = mem.add("My sister Anna lives in Boston")
    mem.add("I live in Denver")
    assert OTHER_MARK in sister.marks and sister.status is Status.CURRENT
    hits = mem.search("where does the user live", limit=3)
    assert hits[0].memory.content == "I live in Denver"
    asked = mem.search("where does Anna live", limit=3)
    assert asked[0].memory.id == sister.id


def test_an_old_value_said_late_is_history_not_the_current_value(mem: Memory) -> None:
    moved = mem.add("I moved to Austin last week", valid_from=datetime(2026, 8, 1, tzinfo=UTC))
    old = mem.add("I live in Toronto", valid_from=datetime(2023, 4, 2, tzinfo=UTC))
    assert mem.get(moved.id).status is Status.CURRENT
    assert mem.get(old.id).status is Status.SUPERSEDED
    assert mem.get(old.id).superseded_by == moved.id


def test_consolidation_never_retires_the_newer_fact(mem: Memory) -> None:
    older = mem.add("我喜欢吃川菜")
    newer = mem.add("我不再喜欢川菜了，现在喜欢粤菜")
    mem.consolidate(wait=True)
    assert mem.get(newer.id).status is Status.CURRENT
    assert mem.get(older.id).superseded_by == newer.id
    assert [h.memory.id for h in mem.search("用户喜欢什么菜", limit=1)] == [newer.id]


def chat(title: str, said: str, at: datetime) -> dict[str, object]:
    """One ChatGPT export conversation of one user message."""
    when = at.timestamp()
    message = {
        "author": {"role": "user"},
        "create_time": when,
        "content": {"content_type": "text", "parts": [said]},
    }
    return {
        "title": title,
        "create_time": when,
        "current_node": "m",
        "mapping": {"m": {"id": "m", "parent": None, "message": message}},
    }


def test_a_chatgpt_export_keeps_when_each_message_was_said(mem: Memory, tmp_path: Path) -> None:
    said = datetime(2023, 4, 2, 9, 30, tzinfo=UTC)
    parsed = chatgpt_conversation(chat("old", "I live in Toronto", said))
    assert datetime.fromisoformat(parsed.messages[0]["created_at"]) == said
    # the current fact of today is not overturned by the 2023 chat imported after it
    ingested = mem.ingest(
        [{"role": "user", "content": "I moved to Austin last week."}],
        session_id="now",
        mode="smart",
        dates=datetime(2026, 11, 20, tzinfo=UTC),
    )
    mem.wait_for_task(ingested.task_id)
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([chat("old", "I live in Toronto", said)]), encoding="utf-8")
    mem.wait_for_import(mem.import_file(export)["id"])
    found = [h.memory.content for h in mem.search("where does the user live", limit=3)]
    assert "Austin" in found[0], found
    assert not any("Toronto" in text for text in found), found


def test_the_session_start_block_and_the_profile_hold_the_current_city_only(
    mem: Memory,
) -> None:
    for number, said in enumerate(
        ["I live in Lisbon.", "I moved to Oslo.", "We just relocated to Bergen."]
    ):
        result = mem.ingest(
            [{"role": "user", "content": said}],
            session_id=f"s{number}",
            mode="smart",
            dates=datetime(2025, 1 + 3 * number, 1, tzinfo=UTC),
        )
        mem.wait_for_task(result.task_id)
    block = session_start.run({"source": "startup"}, EmbeddedBackend(mem), HookConfig())
    assert block.output is not None
    text = block.output["hookSpecificOutput"]["additionalContext"]
    assert "Bergen" in text
    assert "Lisbon" not in text and "Oslo" not in text, text
    profile = mem.profile()
    lines = profile["static_facts"]
    assert any("Bergen" in line for line in lines)
    assert not any("Lisbon" in line or "Oslo" in line for line in lines), lines


def test_the_profile_and_the_session_start_block_list_only_what_holds_for_the_user(
    mem: Memory,
) -> None:
    """A plan, what held once and another person's fact are kept and found by search, but
    neither the profile nor the SessionStart block lists them as the user's."""
    mem.add("I live in Porto")
    for other in (
        "I'm thinking about moving to Lisbon next year",
        "I used to live in Braga",
        "My brother Tiago lives in Faro",
    ):
        mem.add(other, category="profile")
    lines = mem.profile()["static_facts"]
    assert any("Porto" in line for line in lines)
    assert not any(city in line for line in lines for city in ("Lisbon", "Braga", "Faro"))
    block = session_start.run({"source": "startup"}, EmbeddedBackend(mem), HookConfig())
    assert block.output is not None
    text = block.output["hookSpecificOutput"]["additionalContext"]
    assert "Porto" in text
    assert not any(city in text for city in ("Lisbon", "Braga", "Faro")), text
    assert mem.search("where does the user plan to move?", limit=1)[0].memory.content.endswith(
        "next year"
    )


def test_a_direct_add_gets_the_category_its_content_implies_and_keeps_it(mem: Memory) -> None:
    oslo = mem.add("I live in Oslo")
    assert oslo.category is Category.PROFILE
    assert mem.add("I work at Google now").category is Category.PROFILE
    note = mem.add("Standup is at 9", category="events")
    later = mem.add("Standup is at 10", replaces=note.id)
    assert later.category is Category.EVENTS  # a new value of the same fact, same category
    again = mem.add("I live in Oslo", tags=["home"])
    assert again.id == oslo.id and again.tags == ["home"]  # a repeat's new tags join it


def test_auto_share_applies_whatever_door_adds_the_memory(mem: Memory) -> None:
    svc = mem.service
    team = svc.spaces.create("family", "team")
    svc.spaces.add_rule(team.id, source_space=svc.space_id)  # every new memory
    added = mem.add("I live in Oslo")  # the SDK, not REST or MCP
    health(svc)  # the proxy API's probe writes a memory too, and is never shared
    copies = svc.store.list_memories(svc.tenant_id, [team.id], MemoryFilter(), limit=10)[0]
    assert [c.content for c in copies] == [added.content]


@pytest.mark.parametrize(
    ("said", "fact"),
    [
        ("I use bun now btw, please switch this project to it", "The user uses bun now."),
        ('"My dog is called Pixel."', "The user's dog is called Pixel."),
        ("I moved to Denver, can you suggest some restaurants?", "The user moved to Denver."),
        ("我换成pnpm了，帮我改一下配置", "用户换成pnpm了。"),
    ],
)
def test_a_fact_is_stripped_of_what_wraps_it(said: str, fact: str) -> None:
    assert [f.content for f in extract_facts([("user", said)])] == [fact]


def test_an_agents_note_leaves_the_users_global_value_be(mem: Memory) -> None:
    home = mem.add("I live in Denver")
    note = mem.add("I live in Austin", scope="agent/planner")
    assert mem.get(home.id).status is Status.CURRENT
    assert mem.get(note.id).status is Status.CURRENT


def test_a_value_said_to_be_over_ends_that_value_only(mem: Memory) -> None:
    mochi = mem.add("We have a cat named Mochi")
    rex = mem.add("I have a dog called Rex")
    mem.add("Our old cat Mochi passed away last week")
    assert mem.get(mochi.id).status is Status.SUPERSEDED
    assert mem.get(rex.id).status is Status.CURRENT  # pets accumulate: one ending ends one


def said_in(mem: Memory, text: str, session: str, at: datetime) -> None:
    """One user turn through smart ingest, dated, waited for."""
    result = mem.ingest(
        [{"role": "user", "content": text}], session_id=session, dates=at, mode="smart"
    )
    if result.task_id:
        mem.service.wait_for_task(result.task_id, timeout_s=60)


def test_one_message_of_several_news_retires_each_old_value(mem: Memory) -> None:
    """Each clause of a long message is read on its own: the move among other news."""
    said_in(
        mem,
        "me and my bf share a tiny flat in leeds, the boiler is ancient",
        "a",
        datetime(2024, 2, 1, tzinfo=UTC),
    )
    said_in(
        mem,
        "so much news: split up w/ tom (it was time), got the keys to a studio in glasgow, "
        "and adopted a rescue whippet called Bean",
        "b",
        datetime(2025, 3, 1, tzinfo=UTC),
    )
    hits = mem.search("where does the user live now", limit=3)
    assert "glasgow" in hits[0].memory.content
    assert not any("leeds" in h.memory.content for h in hits)


def test_a_fact_distilled_from_a_turn_is_about_what_the_turn_is_about(mem: Memory) -> None:
    said_in(mem, "I'm a baker at a tiny shop called Crumbs", "a", datetime(2023, 5, 1, tzinfo=UTC))
    said_in(mem, "Got hired as pastry chef at the Savoy!!", "b", datetime(2025, 6, 1, tzinfo=UTC))
    hits = mem.search("where does the user work now", limit=3)
    assert "Savoy" in hits[0].memory.content
    assert not any("Crumbs" in h.memory.content for h in hits)


def test_a_relative_clause_stays_with_the_person_it_is_about(mem: Memory) -> None:
    """ "My aunt, who …, …": the clause after the comma is the aunt's too."""
    mem.add("I live in Porto")
    aunt = mem.add("My aunt Rosa, who lives in Faro, visits every summer")
    assert OTHER_MARK in aunt.marks
    assert current(mem) == [aunt.content, "I live in Porto"]


def test_an_ending_beside_the_new_value_ranks_below_it(mem: Memory) -> None:
    """ "No longer X, Y now" in one message: Y holds; the ending is how it came to be."""
    said_in(mem, "I am vegan", "a", datetime(2024, 1, 5, tzinfo=UTC))
    said_in(
        mem,
        "I started eating eggs again, I am no longer vegan",
        "b",
        datetime(2025, 5, 1, tzinfo=UTC),
    )
    top = mem.search("what is the user's current diet", limit=1)[0].memory
    assert "eggs" in top.content


def test_a_home_of_many_years_is_not_history(mem: Memory) -> None:
    """ "I've lived here ten years" holds now; another person's move changes nothing."""
    said_in(
        mem,
        "sydney traffic is a nightmare. anyway i've lived here 10 yrs so i'm used to it",
        "a",
        datetime(2023, 3, 1, tzinfo=UTC),
    )
    said_in(
        mem, "my cousin Dev just moved to Perth for work", "b", datetime(2025, 2, 1, tzinfo=UTC)
    )
    assert "sydney" in mem.search("which city is home to the user", limit=1)[0].memory.content


def test_where_the_user_grew_up_is_history_not_a_home(mem: Memory) -> None:
    grew = mem.add("I grew up in Faro")
    mem.add("I live in Lisbon")
    assert mem.get(grew.id).status is Status.CURRENT  # where one grew up never changes
    assert mem.search("where does the user live", limit=1)[0].memory.content == "I live in Lisbon"
    assert mem.search("where did the user grow up", limit=1)[0].memory.id == grew.id


def test_an_instruction_to_the_assistant_states_nothing(mem: Memory) -> None:
    home = mem.add("I live in Lisbon and cycle to work")
    said_in(mem, "Book me a table near the office", "a", datetime(2026, 1, 2, tzinfo=UTC))
    assert mem.get(home.id).status is Status.CURRENT


def test_a_repeat_in_other_word_forms_is_no_change(mem: Memory) -> None:
    """ "cycles" and "cycle" name one value: the repeat retires nothing."""
    first = mem.add("The user cycles to work every day")
    mem.add("Like I said, I cycle to work every day")
    assert mem.get(first.id).status is Status.CURRENT


def test_the_proxy_recalls_no_plan_or_past_beside_the_answer(mem: Memory) -> None:
    """What search sets aside for a question (a plan, what held once) is not recalled by
    the proxy either, whether search ranked it low or the newest memories would bring it."""
    from memoryd.proxy.recall import recall_block
    from memoryd.proxy.settings import MemorySettings

    mem.add("I live in Porto")
    mem.add("I'm thinking about moving to Lisbon next year")
    mem.add("I used to live in Braga")
    block = recall_block(mem.service, MemorySettings(), [("user", "where does the user live?")])
    assert "Porto" in block
    assert "Lisbon" not in block and "Braga" not in block
    asked = recall_block(
        mem.service, MemorySettings(), [("user", "where does the user plan to move?")]
    )
    assert "Lisbon" in asked  # asked about plans: the plan is the answer


def test_a_clause_naming_an_earlier_value_is_about_what_that_was_about(mem: Memory) -> None:
    """Too short to read by its words ("sold the outback"), a clause naming a value the user
    stated before is about that value's attribute: an end ends it, a mention changes nothing."""
    car = mem.add("I drive a Subaru Outback")
    mem.add("sold the outback last week")
    assert mem.get(car.id).status is Status.SUPERSEDED
    school = mem.add("I study law at Leiden University")
    weather = mem.add("leiden is so rainy this week")
    assert mem.get(school.id).status is Status.CURRENT  # a mention, not a new school
    assert MENTION_MARK in weather.marks


@pytest.mark.parametrize(
    ("fact", "near", "question", "value"),
    [
        (
            "I live in Leeds",
            ["Spent the weekend in Barcelona for a friend's wedding, great tapas"],
            "Where does the user live?",
            "Leeds",
        ),
        (
            "I work at Siemens as a test engineer",
            ["Reminder: send the invoice to the accountant at Bosch on Monday"],
            "Where does the user work?",
            "Siemens",
        ),
        (
            "I drive a Mazda 3",
            ["Someone parked a huge Ford pickup across my driveway this morning"],
            "What car does the user drive?",
            "Mazda",
        ),
        (
            "I play the trombone in a brass band",
            ["Note to self: if the hall is booked, the cello quartet rehearses at church"],
            "Which instrument does the user play?",
            "trombone",
        ),
        (
            "我在学琵琶，每周上一次课",
            ["听说楼下新开了一家钢琴培训班"],
            "用户在学什么乐器？",
            "琵琶",
        ),
    ],
)
def test_a_question_about_the_user_is_answered_by_their_own_statement(
    mem: Memory, fact: str, near: list[str], question: str, value: str
) -> None:
    """What is near the question in words only (a trip, a note, someone else's doing)
    neither retires the fact nor ranks above it."""
    mem.add(fact)
    for text in near:
        mem.add(text)
    assert sorted(current(mem)) == sorted([fact, *near])
    assert value in mem.search(question)[0].memory.content


def test_the_profile_lists_each_language_the_user_speaks(mem: Memory) -> None:
    """A multi-valued attribute said in turns no rule distils: each statement is listed."""
    said = ["我会说四川话和普通话", "这两年在学韩语，日常聊天没问题"]
    for i, text in enumerate(said):
        done = mem.ingest([{"role": "user", "content": text}], session_id=f"s{i}", mode="smart")
        assert done.task_id is not None
        mem.wait_for_task(done.task_id)
    facts = mem.profile()["static_facts"]
    assert all(any(text in fact for fact in facts) for text in said), facts


def test_a_note_naming_another_employer_changes_nothing(mem: Memory) -> None:
    """A note to self names an employer without the user having it: nearest by meaning
    to what is not a value, it replaces nothing (a story of the tuning half)."""
    work = mem.add("I work at Deloitte as an auditor, mostly pharma clients")
    mem.add("Reminder to self: Pfizer's office badge desk is on the 2nd floor, bring ID")
    assert work.content in current(mem)


def test_a_statement_naming_the_user_is_read_whatever_its_topic(mem: Memory) -> None:
    """ "I'm a baker at …" is the user's work, though bakeries are also what the
    examples of news (a shop opening) speak of."""
    old = mem.add("I'm a baker at a tiny shop called Crumbs")
    assert "about:work" in old.marks


def test_a_chinese_name_said_short_is_the_same_value(mem: Memory) -> None:
    """Chinese shortens a name to some of its characters in order (北京大学 → 北大): a
    change told of the short form, with the new value beside it, retires the old."""
    old = mem.add("我在北京大学读研究生")
    new = mem.add("北大离家太远了，换到清华读了")
    assert old.content not in current(mem)
    assert new.content in current(mem)


def test_a_change_right_after_a_clause_about_an_attribute_changes_it(mem: Memory) -> None:
    """ "The old one was X, switched to Y": the switch names no attribute of its own, it
    changes the one the clause before it is about."""
    old = mem.add("I drink oolong every afternoon")
    mem.add("Oolong was keeping me up at night, switched to chamomile")
    assert old.content not in current(mem)


def test_the_partner_named_is_the_users_own_fact(mem: Memory) -> None:
    """ "My wife's name is Ines": it opens with another person but gives only who the
    user's partner is; the profile lists it. Another person's wedding stays theirs."""
    partner = mem.add("My wife's name is Ines")
    brother = mem.add("My brother just got married")
    assert OTHER_MARK not in partner.marks and "about:partner" in partner.marks
    assert OTHER_MARK in brother.marks
    facts = mem.profile()["static_facts"]
    assert partner.content in facts and brother.content not in facts


def test_the_partner_named_in_chinese_is_the_users_own_fact(mem: Memory) -> None:
    said = mem.add("我男朋友叫陈凯")
    assert "about:partner" in said.marks and OTHER_MARK not in said.marks


def test_the_users_children_are_the_users_own_facts(mem: Memory) -> None:
    """A child named, born or growing up is the user's (many of them: they accumulate);
    a child's own attribute ("my son lives in Ghent") stays the child's."""
    leo = mem.add("My son Leo turned four today")
    ada = mem.add("Our daughter Ada was born on Friday")
    lives = mem.add("My son lives in Ghent now")
    assert "about:children" in leo.marks and OTHER_MARK not in leo.marks
    assert "about:past" not in ada.marks
    assert OTHER_MARK in lives.marks
    facts = mem.profile()["static_facts"]
    assert leo.content in facts and ada.content in facts
    assert lives.content not in facts


def test_the_users_thing_named_as_a_subject_ends_its_value(mem: Memory) -> None:
    """ "The Saab finally gave out": it opens with a thing, not the user, but the thing is
    a value the user stated, so its end is the end of that value; a thing the user never
    named ("the meeting moved to Thursday") stays read as nothing."""
    old = mem.add("My car is an old Saab 900, it's older than me")
    end = mem.add("The Saab finally died on the highway")
    other = mem.add("The meeting moved to Thursday")
    assert old.content not in current(mem)
    assert "about:car" in end.marks
    assert other.marks == ["about:none"]
