"""Rule-based extraction: the offline smart mode must find facts, and only facts."""

from __future__ import annotations

import re

import pytest

from memoryd.ingest.rules import (
    CATEGORY,
    IMPORTANCE,
    MAX_FACTS,
    ExtractedFact,
    extract_facts,
    repeats,
    split_sentences,
    updates,
)
from memoryd.models import Category


def facts(*user: str) -> list[ExtractedFact]:
    return extract_facts([("user", text) for text in user])


def one(text: str) -> ExtractedFact:
    found = facts(text)
    assert len(found) == 1, (text, found)
    return found[0]


# ---------------------------------------------------------------- preferences


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("I love coffee", "preference:drink", "coffee"),
        ("I really like drinking kombucha in the morning.", "preference:drink", "kombucha"),
        ("My favorite color is blue.", "preference:color", "blue"),
        ("Tea is my favorite drink now", "preference:drink", "Tea"),
        ("I'd rather have tea than coffee", "preference:drink", "tea"),
        ("I switched from Vim to Emacs", "preference:editor", "Emacs"),
        ("I'm a big fan of jazz", "preference:music", "jazz"),
        ("I prefer Python", "preference:programming_language", "Python"),
        ("I enjoy hiking", "preference:hiking", "hiking"),
        ("I prefer tabs over spaces", "preference:spaces/tabs", "tabs"),
        ("我喜欢喝咖啡", "preference:drink", "咖啡"),
        ("我最喜欢的颜色是蓝色", "preference:color", "蓝色"),
        ("我最爱吃火锅", "preference:food", "火锅"),
        ("我喜欢上了爬山", "preference:爬山", "爬山"),
        ("我觉得我喜欢茶", "preference:drink", "茶"),
    ],
)
def test_preference_slot_and_value(text: str, slot: str, value: str) -> None:
    fact = one(text)
    assert (fact.kind, fact.slot, fact.value) == ("preference", slot, value)
    assert fact.category is Category.PREFERENCES
    assert fact.importance == IMPORTANCE["preference"]
    assert fact.tags == ["preference", slot.split(":", 1)[1]]
    assert not fact.negative


def test_a_changed_preference_keeps_its_slot_and_replaces_the_old_value() -> None:
    old, new = facts("I love coffee", "Actually I prefer tea now.")
    assert old.slot == new.slot == "preference:drink"
    assert (old.value, new.value) == ("coffee", "tea")
    assert new.change and not old.change
    assert updates(new, old) and not updates(old, new)


def test_a_changed_chinese_preference_keeps_its_slot() -> None:
    old, new = facts("我喜欢喝咖啡", "我现在更喜欢喝茶")
    assert old.slot == new.slot == "preference:drink"
    assert (old.value, new.value) == ("咖啡", "茶")
    assert new.change and new.exclusive
    assert updates(new, old)


@pytest.mark.parametrize(
    "text",
    ["I hate hiking", "I don't like hiking anymore", "I can't stand hiking", "I'm not into hiking"],
)
def test_dislikes_are_negative(text: str) -> None:
    fact = one(text)
    assert fact.negative and fact.slot == "preference:hiking" and fact.value == "hiking"


def test_no_longer_liking_something_supersedes_liking_it() -> None:
    liked, gone = facts("I love coffee", "I don't like coffee anymore")
    assert gone.negative and gone.change
    assert updates(gone, liked)


def test_disliking_one_thing_does_not_cancel_liking_another() -> None:
    liked, hated = facts("I love coffee", "I hate tea")
    assert liked.slot == hated.slot
    assert not updates(hated, liked)


def test_two_plain_likes_of_one_topic_both_stand() -> None:
    coffee, tea = facts("I like coffee", "I like tea")
    assert not updates(tea, coffee)


@pytest.mark.parametrize(
    ("text", "negative", "change"),
    [("我不喜欢咖啡", True, False), ("我不再喜欢咖啡了", True, True), ("我讨厌咖啡", True, False)],
)
def test_chinese_dislikes(text: str, negative: bool, change: bool) -> None:
    fact = one(text)
    assert (fact.slot, fact.value) == ("preference:drink", "咖啡")
    assert (fact.negative, fact.change) == (negative, change)


@pytest.mark.parametrize(
    ("text", "other"), [("比起咖啡，我更喜欢茶", "咖啡"), ("我把咖啡换成了茶", "咖啡")]
)
def test_chinese_comparisons_and_switches(text: str, other: str) -> None:
    fact = one(text)
    assert (fact.slot, fact.value) == ("preference:drink", "茶")
    assert fact.exclusive
    assert updates(fact, one("我喜欢咖啡"))


def test_switching_is_a_change() -> None:
    fact = one("我现在改喝茶了")
    assert (fact.slot, fact.value, fact.change) == ("preference:drink", "茶", True)


def test_a_favourite_is_one_value_at_a_time() -> None:
    blue, green = facts("My favorite color is blue", "My favourite colour is green")
    assert blue.slot == green.slot == "preference:color"
    assert updates(green, blue)


# ---------------------------------------------------------------- biography


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("My name is Ana.", "name", "Ana"),
        ("Please call me Bob", "name", "Bob"),
        ("I'm 34 years old", "age", "34"),
        ("I just turned 35", "age", "35"),
        ("My birthday is on May 3", "birthday", "May 3"),
        ("I live in Lisbon", "lives_in", "Lisbon"),
        ("I moved to Berlin last year.", "lives_in", "Berlin"),
        ("I live in St. Louis.", "lives_in", "St. Louis"),
        ("I work at Google as an engineer", "works_at", "Google"),
        ("I work as a data scientist", "job", "data scientist"),
        ("I'm a software engineer", "job", "software engineer"),
        ("I'm from Porto", "from", "Porto"),
        ("I have a dog named Rex", "pet:dog", "Rex"),
        ("I'm allergic to peanuts", "allergy:peanuts", "peanuts"),
        ("我叫李雷。", "name", "李雷"),
        ("我的名字是韩梅梅", "name", "韩梅梅"),
        ("我今年三十岁", "age", "三十"),
        ("我的生日是5月3日", "birthday", "5月3日"),
        ("我住在上海", "lives_in", "上海"),
        ("我搬到了深圳", "lives_in", "深圳"),
        ("我在谷歌工作", "works_at", "谷歌"),
        ("我是一名工程师", "job", "工程师"),
        ("我是学生", "job", "学生"),
        ("我来自成都", "from", "成都"),
        ("我有一只狗叫旺财", "pet:dog", "旺财"),
        ("我对花生过敏", "allergy:花生", "花生"),
    ],
)
def test_biography_slots(text: str, slot: str, value: str) -> None:
    fact = one(text)
    assert (fact.kind, fact.slot, fact.value) == ("biography", slot, value)
    assert fact.category is Category.PROFILE
    assert fact.importance == IMPORTANCE["biography"]


def test_moving_supersedes_where_one_lived() -> None:
    lived, moved = facts("I live in Lisbon", "I moved to Berlin")
    assert lived.slot == moved.slot == "lives_in"
    assert moved.change and updates(moved, lived)
    cn_lived, cn_moved = facts("我住在北京", "我搬到了上海")
    assert cn_lived.slot == cn_moved.slot == "lives_in"
    assert updates(cn_moved, cn_lived)


def test_a_new_employer_supersedes_the_old_one_without_a_change_word() -> None:
    old, new = facts("I work at Google", "I work at OpenAI")
    assert updates(new, old)


def test_one_sentence_can_state_several_facts() -> None:
    name, home = facts("My name is Ana and I live in Lisbon.")
    assert (name.slot, name.value, name.content) == ("name", "Ana", "The user's name is Ana.")
    assert (home.slot, home.value, home.content) == (
        "lives_in",
        "Lisbon",
        "The user lives in Lisbon.",
    )


def test_chinese_clauses_may_drop_the_subject() -> None:
    found = facts("你好！我叫张三，今年30岁，住在北京。")
    assert [(f.slot, f.value) for f in found] == [
        ("name", "张三"),
        ("age", "30"),
        ("lives_in", "北京"),
    ]
    assert [f.content for f in found] == ["用户叫张三。", "用户今年30岁。", "用户住在北京。"]


def test_a_dropped_subject_after_someone_else_is_not_the_user() -> None:
    assert facts("他叫张三，住在北京") == []


# ---------------------------------------------------------------- decisions, habits, plans


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("We decided to use Postgres for the backend.", "decision", "Postgres"),
        ("Let's go with MySQL instead", "decision", "MySQL"),
        ("I'll use Rust for this", "decision", "Rust"),
        ("我们决定用PostgreSQL", "decision", "PostgreSQL"),
        ("就用MySQL吧", "decision", "MySQL"),
        ("We went with the blue design", "decision", "blue design"),
        ("I always get anxious before flights", "habit", "get anxious before flights"),
        ("I usually run at 6am.", "habit", "run at 6am"),
        ("Every morning I drink green tea", "habit", "drink green tea"),
        ("I go to the gym twice a week", "habit", "go to the gym twice a week"),
        ("我通常早上七点起床", "habit", "早上七点起床"),
        ("我每天跑步", "habit", "跑步"),
        ("每天早上我喝一杯咖啡", "habit", "喝一杯咖啡"),
        ("I'm planning to visit Rome next month", "plan", "visit Rome"),
        ("I'll fly to Tokyo next week", "plan", "fly to Tokyo"),
        ("My plan is to learn Spanish", "plan", "learn Spanish"),
        ("我打算下个月去日本", "plan", "下个月去日本"),
        ("下周我要去北京出差", "plan", "去北京出差"),
        ("我的计划是学西班牙语", "plan", "学西班牙语"),
    ],
)
def test_decisions_habits_and_plans(text: str, kind: str, value: str) -> None:
    fact = one(text)
    assert (fact.kind, fact.value) == (kind, value)
    assert fact.category is CATEGORY[fact.kind]
    assert fact.l1_overview == text  # the user's whole sentence is the fact's source
    assert not re.search(r"\b(?:I|my|me)\b|我", fact.content)  # the fact is about the user


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("I live in Lyon", Category.PROFILE),
        ("I love green tea", Category.PREFERENCES),
        ("I usually run at 6am.", Category.PATTERNS),
        ("We decided to use Postgres for the backend.", Category.CASES),
        ("I'm planning to visit Rome next month", Category.EVENTS),
    ],
)
def test_each_kind_of_fact_is_filed_under_its_category(text: str, category: Category) -> None:
    assert one(text).category is category


def test_decisions_about_a_known_topic_share_a_slot() -> None:
    first, second = facts("We decided to use Postgres", "我们决定用MySQL")
    assert first.slot == second.slot == "decision:database"
    assert one("Let's go with the blue design").slot is None


def test_habits_and_plans_have_no_slot() -> None:
    assert one("I usually run at 6am").slot is None
    assert one("I'm planning to visit Rome next month").slot is None


# ---------------------------------------------------------------- what is not a fact


@pytest.mark.parametrize(
    "text",
    [
        "hi!",
        "Hello there",
        "thanks a lot",
        "Thank you so much!",
        "ok, got it",
        "谢谢",
        "谢谢你！",
        "你好",
        "好的",
        "what's my favorite drink?",
        "what do I like",
        "Do you like coffee?",
        "Where do I live?",
        "我喜欢什么？",
        "我喜欢什么",
        "我住在哪里",
        "I love it!",
        "Thanks, I love it",
        "I like your answer",
        "I like how you explained it",
        "I love you",
        "我喜欢你的回答",
        "Can you remember that I prefer dark mode",
        "Tell me what I like",
        "If I liked coffee I'd say so",
        "如果我喜欢咖啡就好了",
        "I'd like a coffee, please",
        "I'm going to bed",
        "I'm 30 minutes away",
        "他喜欢咖啡",
        "我们喜欢咖啡",
        "我爱人是医生",
        "She lives in Paris",
        "The weather is nice today",
        # surprise, approval of a suggestion, company: not habits, preferences, decisions
        "I never knew there were so many ways to use cauliflower.",
        "Wow, I never realized how important sound design could be in movies!",
        "I always thought it was harder than that",
        "I like the idea of a nature walk and a treasure hunt.",
        "I really like the suggestions, especially the first one.",
        "I love your tips",
        "I went with a group of friends, and we had a blast.",
        "We went with my parents last year",
    ],
)
def test_no_fact_from_chatter_questions_or_others(text: str) -> None:
    assert facts(text) == []


def test_assistant_and_other_speakers_state_no_user_facts() -> None:
    said = [
        ("assistant", "I love coffee. You live in Lisbon."),
        ("system", "I prefer tea."),
        ("Caroline", "I moved to Berlin."),
        ("user", "I love coffee"),
    ]
    assert [f.value for f in extract_facts(said)] == ["coffee"]
    assert extract_facts([("assistant", "我喜欢喝咖啡")]) == []


def test_roles_are_matched_loosely() -> None:
    assert len(extract_facts([(" User ", "I love coffee"), ("HUMAN", "I hate tea")])) == 2


def test_private_blocks_never_become_facts() -> None:
    assert facts("<private>I live in Lisbon</private>") == []
    found = facts("I love coffee. <private>I live in Lisbon.</private>")
    assert [f.slot for f in found] == ["preference:drink"]
    assert all("Lisbon" not in f.source_text for f in found)


# ---------------------------------------------------------------- the batch


def test_a_repeat_in_the_batch_is_kept_once() -> None:
    found = facts("I love coffee.", "I live in Lisbon", "I love coffee!", "I LOVE COFFEE")
    assert [f.slot for f in found] == ["preference:drink", "lives_in"]


def test_repeats_ignores_case_and_compares_polarity() -> None:
    a, b, c = facts("I love coffee"), facts("i love Coffee"), facts("I hate coffee")
    assert repeats(b[0], a[0]) and not repeats(c[0], a[0])


def test_max_facts_keeps_the_latest() -> None:
    many = [f"I live in City{i}" for i in range(MAX_FACTS + 30)]
    found = extract_facts([("user", t) for t in many])
    assert len(found) == MAX_FACTS and found[-1].value == f"City{len(many) - 1}"
    assert found[0].value == f"City{len(many) - MAX_FACTS}"
    assert [f.value for f in extract_facts([("user", t) for t in many], max_facts=3)] == [
        "City77",
        "City78",
        "City79",
    ]
    assert extract_facts([("user", "I love coffee")], max_facts=0) == []


def test_content_stays_in_the_users_language() -> None:
    for fact in facts("我喜欢喝咖啡", "我住在上海", "我每天跑步", "我们决定用PostgreSQL"):
        assert fact.content == fact.l0_abstract or fact.slot is not None
        assert all(not ch.isascii() or ch in "PostgreSQL" for ch in fact.content)
        assert fact.l2_content == fact.source_text


def test_layers() -> None:
    message = "Hi! I love coffee. Also I live in Lisbon."
    coffee, home = facts(message)
    assert coffee.content == "The user loves coffee."
    assert coffee.l0_abstract == "Likes (drink): coffee"  # the index entry names the slot
    assert coffee.l1_overview == "I love coffee."
    assert coffee.l2_content == coffee.source_text == message
    assert home.content == "The user lives in Lisbon."  # "Also" announces, it is not the fact
    assert home.l1_overview == "Also I live in Lisbon."


def test_a_greeting_before_a_fact_is_not_part_of_it() -> None:
    assert one("Hi, I love coffee").content == "The user loves coffee."
    assert one("好的，我喜欢茶").content == "用户喜欢茶。"


def test_sentence_splitting() -> None:
    assert split_sentences("I love tea! Do you?\nDr. Who is great. 我喜欢茶。你呢？") == [
        "I love tea!",
        "Do you?",
        "Dr. Who is great.",
        "我喜欢茶。",
        "你呢？",
    ]


# ---------------------------------------------------------------- the acceptance script


def reconcile(batch: list[ExtractedFact]) -> tuple[list[ExtractedFact], list[ExtractedFact]]:
    """A toy reconciler over slots: (current facts, superseded facts)."""
    current: list[ExtractedFact] = []
    superseded: list[ExtractedFact] = []
    for fact in batch:
        if any(repeats(fact, old) for old in current):
            continue
        for old in [o for o in current if updates(fact, o)]:
            current.remove(old)
            superseded.append(old)
        current.append(fact)
    return current, superseded


@pytest.mark.parametrize(
    "script",
    [
        [
            ("user", "Hi there!"),
            ("assistant", "Hello! How can I help?"),
            ("user", "I love coffee. I live in Lisbon."),
            ("assistant", "Noted."),
            ("user", "My favorite color is blue."),
            ("user", "Thanks a lot!"),
            ("user", "Actually I prefer tea now."),
            ("user", "I live in Lisbon, by the way."),
            ("user", "what's my favorite drink?"),
        ],
        [
            ("user", "你好！"),
            ("assistant", "你好，有什么可以帮你？"),
            ("user", "我喜欢喝咖啡。我住在里斯本。"),
            ("assistant", "好的。"),
            ("user", "我最喜欢的颜色是蓝色。"),
            ("user", "谢谢！"),
            ("user", "我现在更喜欢喝茶。"),
            ("user", "我住在里斯本。"),
            ("user", "我喜欢喝什么？"),
        ],
    ],
)
def test_scripted_conversation(script: list[tuple[str, str]]) -> None:
    batch = extract_facts(script)
    current, superseded = reconcile(batch)
    drink = [f for f in current if f.slot == "preference:drink"]
    assert len(drink) == 1 and drink[0].value in ("tea", "茶")
    assert [f.value for f in superseded] in (["coffee"], ["咖啡"])
    assert sum(f.slot == "lives_in" for f in batch) == 1  # the repeat is not duplicated
    assert {f.slot for f in current} == {"preference:drink", "lives_in", "preference:color"}
    noise = ("hi", "thank", "你好", "谢谢", "?", "？")
    assert not any(n in f.content.lower() for f in batch for n in noise)
