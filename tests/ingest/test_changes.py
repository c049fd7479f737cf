"""Changes of fact, as the rules read them: moves, jobs, diets, partners, tools, flips.

Each family is tried on sentences that state a change (positive) and on
sentences that look alike and do not (negative), in English and Chinese.
What a change replaces is decided by :func:`updates` (the reconciler's rules).
"""

from __future__ import annotations

from datetime import datetime

import pytest
from test_rules import facts, one

from memoryd.ingest.rules import extract_facts, updates
from memoryd.text.phrasing import third_person

# ---------------------------------------------------------------- what a change is


@pytest.mark.parametrize(
    ("before", "after", "slot", "value"),
    [
        # moves
        (
            "I live in Madrid with my partner.",
            "Small update: we relocated to Oslo.",
            "lives_in",
            "Oslo",
        ),
        (
            "My home is in Austin, Texas.",
            "I just relocated from Austin to Denver.",
            "lives_in",
            "Denver",
        ),
        (
            "I'm based in Toronto.",
            "We bought a house in Vancouver and moved there.",
            "lives_in",
            "Vancouver",
        ),
        ("I live in Paris.", "I live in Brussels now.", "lives_in", "Brussels"),
        ("我住在北京。", "我搬到杭州了。", "lives_in", "杭州"),
        ("我在广州生活。", "我们今年春天搬去了重庆。", "lives_in", "重庆"),
        ("我现在住在成都。", "跟你说个消息：我上个月搬到深圳了。", "lives_in", "深圳"),
        # jobs
        (
            "I teach maths at a high school.",
            "I left teaching and now work as a UX designer.",
            "job",
            "UX designer",
        ),
        (
            "I work as an accountant.",
            "I quit my accounting job and opened my own bakery!",
            "job",
            "bakery",
        ),
        (
            "I'm a software engineer at Spotify.",
            "I'm now a product manager at Figma.",
            "job",
            "product manager",
        ),
        (
            "I'm a junior developer.",
            "I was promoted to senior developer this week.",
            "job",
            "senior developer",
        ),
        ("I work as a civil engineer.", "I retired in September.", "job", "retired"),
        ("我是一名护士。", "我辞职了，现在是一名自由摄影师。", "job", "自由摄影师"),
        ("我是程序员。", "我不当程序员了，开始做产品经理。", "job", "产品经理"),
        ("我在腾讯工作。", "我换工作了，现在在阿里巴巴上班。", "works_at", "阿里巴巴"),
        # diets
        (
            "I'm vegetarian.",
            "I started eating fish again, so I'm pescatarian now.",
            "diet",
            "pescatarian",
        ),
        ("I am a vegetarian.", "These days I follow a keto diet.", "diet", "keto"),
        ("I'm vegan.", "I'm not vegan anymore.", "diet", "vegan"),
        ("我吃素。", "我不再吃素了，现在什么都吃。", "diet", "什么都吃"),
        # relationships
        (
            "My partner's name is Sam.",
            "Sam and I split up last month, I'm single now.",
            "partner",
            "single",
        ),
        ("I'm engaged to Maria.", "Maria and I got married in May!", "partner", "married"),
        ("我有男朋友，他叫小王。", "我和小王分手了，现在单身。", "partner", "单身"),
        ("我和女朋友订婚了。", "我们上个月结婚了！", "partner", "结婚"),
        # tools
        (
            "I use Vim for all my coding.",
            "I switched to VS Code last week.",
            "preference:editor",
            "VS Code",
        ),
        (
            "Our backend runs on MySQL.",
            "We migrated the backend from MySQL to Postgres.",
            "uses:database",
            "Postgres",
        ),
        (
            "我们的数据库用的是MySQL。",
            "我们把数据库从MySQL换成了PostgreSQL。",
            "uses:database",
            "PostgreSQL",
        ),
        ("我平时用Windows电脑。", "我换成Mac了。", "preference:os", "Mac"),
        # preferences that flip
        (
            "I love spicy Thai food.",
            "I don't like spicy food anymore.",
            "preference:food",
            "spicy food",
        ),
        (
            "I prefer tea over coffee.",
            "Lately I drink coffee instead of tea.",
            "preference:drink",
            "coffee",
        ),
        (
            "My favourite band is Radiohead.",
            "These days my favourite band is Portishead.",
            "preference:music",
            "Portishead",
        ),
        ("我很喜欢吃辣。", "我现在不喜欢吃辣了。", "preference:food", "辣"),
        ("我最喜欢的颜色是蓝色。", "我现在最喜欢的颜色是绿色。", "preference:color", "绿色"),
        # names and ages
        ("My name is Katherine.", "Please call me Kate from now on.", "name", "Kate"),
        ("我今年28岁。", "我现在29岁了。", "age", "29"),
    ],
)
def test_a_change_replaces_what_it_changes(before: str, after: str, slot: str, value: str) -> None:
    old, new = facts(before)[0], facts(after)[0]
    assert (new.slot, new.value) == (slot, value)
    assert updates(new, old), (old, new)


@pytest.mark.parametrize(
    ("text", "old_value"),
    [
        ("I stopped using Todoist and moved everything to Notion.", "Todoist"),
        ("We migrated the backend from MySQL to Postgres.", "MySQL"),
        ("I left teaching and now work as a UX designer.", "teaching"),
        ("我以前在纽约工作，现在在伦敦工作。", "纽约"),
    ],
)
def test_a_change_names_what_it_replaces(text: str, old_value: str) -> None:
    fact = one(text)
    assert fact.old_value == old_value and fact.change


def test_a_value_that_is_over_replaces_the_slot_whatever_it_held() -> None:
    job, quit_ = facts("I work as a nurse.", "I quit my job.")
    assert quit_.ends and quit_.slot == "job"
    assert updates(quit_, job)


def test_a_stop_names_the_value_it_ends() -> None:
    used, stopped = facts("I manage my tasks in Todoist.", "I stopped using Todoist.")
    assert used.slot == "uses:tasks" and stopped.ends
    assert updates(stopped, used)  # the value names it, whatever slot the stop guessed


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("I love coffee", "I like tea"),  # two likes stand side by side
        ("I love hiking", "I hate running"),  # disliking one thing keeps liking another
        ("I use Python", "I use Rust"),  # two tools of one topic, without a change word
    ],
)
def test_values_that_can_hold_together_stay(first: str, second: str) -> None:
    a, b = one(first), one(second)
    assert not updates(b, a)


# ---------------------------------------------------------------- what is not a change


@pytest.mark.parametrize(
    "text",
    [
        "My sister moved to Berlin last year.",
        "He quit his job last week.",
        "I left my keys at home.",
        "I stopped by the store.",
        "Did you move to Berlin?",
        "We moved the meeting to Friday.",
        "I switched the lights off.",
        "I'm Italian.",
        "I'm fine, thanks.",
        "My friend is vegan.",
        "I left early yesterday.",
        "I moved the file to the trash.",
        "I'm so happy for you!",
        "我妹妹搬到北京了。",
        "他辞职了。",
        "你是程序员吗？",
        "我们喜欢咖啡。",
    ],
)
def test_look_alikes_state_no_fact_of_the_user(text: str) -> None:
    assert facts(text) == []


# ---------------------------------------------------------------- facts about the user


@pytest.mark.parametrize(
    ("said", "fact"),
    [
        ("Big news: I moved to Porto last month.", "The user moved to Porto last month."),
        ("Remember that I'm allergic to peanuts.", "The user is allergic to peanuts."),
        ("Just a reminder, I'm allergic to peanuts.", "The user is allergic to peanuts."),
        ("I don't like spicy food anymore", "The user doesn't like spicy food anymore."),
        (
            "I left teaching and now work as a UX designer.",
            "The user left teaching and now works as a UX designer.",
        ),
        ("Sam and I split up, I'm single now.", "Sam and the user split up, they are single now."),
        ("Our backend runs on MySQL.", "The user's backend runs on MySQL."),
        ("记住：我的生日是5月3日。", "用户的生日是5月3日。"),
        ("我们今年春天搬去了重庆。", "用户今年春天搬去了重庆。"),
    ],
)
def test_a_fact_is_written_about_the_user_without_its_lead_in(said: str, fact: str) -> None:
    found = one(said)
    assert found.content == fact
    assert found.l1_overview == said  # the user's sentence is kept as the source


def test_a_sentence_with_several_facts_gives_each_its_subject() -> None:
    name, home, job = facts("Hi! I'm Priya, I live in Berlin and work as a nurse.")
    assert [(f.slot, f.value) for f in (name, home, job)] == [
        ("name", "Priya"),
        ("lives_in", "Berlin"),
        ("job", "nurse"),
    ]
    assert job.content == "The user works as a nurse."
    cn = facts("我叫李明，住在上海，是一名老师。")
    assert [f.content for f in cn] == ["用户叫李明。", "用户住在上海。", "用户是一名老师。"]


def test_a_job_at_a_company_names_the_employer_too() -> None:
    job, employer = facts("I'm a software engineer at Spotify.")
    assert (job.slot, job.value) == ("job", "software engineer")
    assert (employer.slot, employer.value, employer.content) == (
        "works_at",
        "Spotify",
        "The user works at Spotify.",
    )


def test_a_change_is_dated_by_when_it_was_said() -> None:
    (moved,) = extract_facts([("user", "I moved to Porto.")], dates=[datetime(2026, 10, 20)])
    assert moved.content == "The user moved to Porto (2026-10)."
    (first,) = extract_facts([("user", "I live in Berlin.")], dates=[datetime(2026, 1, 2)])
    assert first.content == "The user lives in Berlin."  # a first statement needs no date
    (cn,) = extract_facts([("user", "我搬到杭州了。")], dates=[datetime(2026, 6, 3)])
    assert cn.content == "用户搬到杭州了（2026-06）。"


@pytest.mark.parametrize(
    ("clause", "elided", "expected"),
    [
        ("I live in Berlin", False, "The user lives in Berlin."),
        ("I study law", False, "The user studies law."),
        ("I go running", False, "The user goes running."),
        ("I have two cats", False, "The user has two cats."),
        ("I've been vegan for years", False, "The user has been vegan for years."),
        ("I no longer play chess", False, "The user no longer plays chess."),
        ("I do not eat meat", False, "The user does not eat meat."),
        ("work as a nurse", True, "The user works as a nurse."),
        ("Maria and I got married", False, "Maria and the user got married."),
        ("Sure, and I am allergic to walnuts", False, "Sure, and the user is allergic to walnuts."),
        ("My favourite color is blue", False, "The user's favourite color is blue."),
        ("Tea is my favorite drink", False, "Tea is the user's favorite drink."),
        ("我住在北京", False, "用户住在北京。"),
        ("住在北京", True, "用户住在北京。"),
    ],
)
def test_third_person(clause: str, elided: bool, expected: str) -> None:
    assert third_person(clause, elided=elided) == expected
