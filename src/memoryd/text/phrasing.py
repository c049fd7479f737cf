"""A fact in the third person: "I moved to Porto" is kept as "The user moved to Porto".

A distilled memory is read later, out of its conversation, by an agent
that answers about the user: "I love spicy food" injected into its context
reads as the agent's own taste, and a question about "the user" matches
"The user loves spicy food" better than a line without its subject. So a
fact names its subject: the first person becomes "the user" (then "they"),
the verb agrees, "my" becomes "the user's" (then "their"), and a clause
whose subject was left out ("… and work as a nurse", "…，住在北京") gets it
back. The sentence the user said stays beside the fact as its source.

Chinese: 我 / 我们 become 用户. Pure: no I/O.
"""

from __future__ import annotations

import re
from datetime import datetime

from memoryd.text.rule_tables import words

SUBJECT = "the user"
LATER = "they"
SUBJECT_CN = "用户"
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_TOKEN = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?|[^A-Za-z]+")
_END = re.compile(r"[\s.!?…~。！？，,;；:：]+$")
# words between a subject and its verb that leave the verb as it is
ADVERBS = words(
    "now also really truly totally absolutely definitely actually still just recently finally "
    "currently usually always often never rarely sometimes generally mostly personally honestly "
    "no longer kind sort of kinda much mainly only even already happily officially strictly "
    "originally newly"
)
UNCHANGED = words(
    "can could will would should shall might must may did didn't can't cannot won't wouldn't "
    "couldn't shouldn't was wasn't had hadn't used got left quit lost took went ran began "
    "became bought found grew made met sold spent thought wrote ate drank gave heard kept knew "
    "put read said saw sat slept spoke stood taught told understood won woke set cut let split "
    "broke chose drove fell felt flew forgot held led paid rode sent sang swam threw wore "
    "turned"
)
IRREGULAR = {"am": "is", "have": "has", "do": "does", "don't": "doesn't", "go": "goes",
             "haven't": "hasn't", "are": "is", "aren't": "isn't", "were": "was",
             "weren't": "wasn't"}  # fmt: skip
PLURAL = {"am": "are", "was": "were", "wasn't": "weren't", "is": "are", "has": "have"}
SUBJECT_FORMS = {
    "i": ("", ""), "we": ("", ""),
    "i'm": ("is", "are"), "we're": ("is", "are"), "i've": ("has", "have"),
    "we've": ("has", "have"), "i'd": ("would", "would"), "we'd": ("would", "would"),
    "i'll": ("will", "will"), "we'll": ("will", "will"),
}  # fmt: skip
OBJECTS = {"me": "them", "myself": "themselves", "us": "them", "ourselves": "themselves",
           "mine": "theirs", "ours": "theirs"}  # fmt: skip
POSSESSIVES = frozenset(("my", "our"))
# verbs the user's left-out subject may govern after "and": "… and now work as a designer"
BASE_VERBS = words(
    "work live love like prefer have teach run use eat drink play study own enjoy do go need "
    "want hate dislike keep manage write read watch listen code cook travel drive ride wear"
)


def conjugate(verb: str) -> str:
    """The third person singular of a verb said after "I" ("live" → "lives")."""
    low = verb.casefold()
    if low in IRREGULAR:
        return _like(verb, IRREGULAR[low])
    if low in UNCHANGED or low.endswith(("ed", "n't")) or "'" in low:
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _like(original: str, word: str) -> str:
    return word.capitalize() if original[:1].isupper() else word


def _english(clause: str, elided: bool) -> str:
    tokens = _TOKEN.findall(clause)
    out: list[str] = []
    named = False  # the user has been named once: later mentions are "they"
    subject_is_user = elided  # the clause's subject is "the user" alone (a verb agrees)
    agree: str | None = None  # "singular" / "plural": the next verb agrees with the subject
    if elided:
        out.append(SUBJECT + " ")
        named, agree = True, "singular"
    previous = ""
    joined = False  # the "and" before was a clause's ("…, and I am"), not a subject's
    punctuated = False
    for token in tokens:
        low = token.casefold().replace("’", "'")
        if not token[:1].isalpha():
            out.append(token)
            punctuated = punctuated or not token.isspace()
            continue
        if low in ("and", "or"):
            joined = punctuated
        punctuated = False
        if low in SUBJECT_FORMS:
            # "Maria and I got married": plural; "please, and I am": a new clause
            compound = previous in ("and", "or") and not joined
            subject = LATER if named and not compound else SUBJECT
            singular, plural = SUBJECT_FORMS[low]
            aux = plural if subject == LATER or compound else singular
            out.append(subject + (f" {aux}" if aux else ""))
            named, subject_is_user = True, subject == SUBJECT and not compound
            agree = None if aux or compound else ("plural" if subject == LATER else "singular")
        elif agree and low in ADVERBS:
            out.append(token)
        elif agree == "after and":  # the same subject again, left out: only a verb agrees
            out.append(conjugate(token) if low in BASE_VERBS else token)
            agree = None
        elif agree:
            out.append(conjugate(token) if agree == "singular" else PLURAL.get(low, token))
            agree = None
        elif low == "and" and subject_is_user:
            out.append(token)
            agree = "after and"
        elif low in POSSESSIVES:
            out.append("their" if named else SUBJECT + "'s")
            named = True
        elif low in OBJECTS:
            out.append(OBJECTS[low])
        else:
            out.append(token)
        previous = low
    text = "".join(out).strip()
    return text[:1].upper() + text[1:]


def _chinese(clause: str, elided: bool) -> str:
    text = clause.replace("我们", SUBJECT_CN).replace("我", SUBJECT_CN)
    return text if text.startswith(SUBJECT_CN) or not elided else SUBJECT_CN + text


def third_person(clause: str, *, elided: bool = False, when: datetime | None = None) -> str:
    """``clause`` said by the user, as a fact about them; ``when`` dates a change.

    ``elided``: the clause's subject (the user) was left out. The date, where
    given, is the month the fact was said: "The user moved to Porto (2026-10)."
    """
    chinese = bool(CJK.search(clause))
    body = _END.sub("", clause.strip())
    text = _chinese(body, elided) if chinese else _english(body, elided)
    if when is not None:
        text += f"（{when:%Y-%m}）" if chinese else f" ({when:%Y-%m})"
    return text + ("。" if chinese else ".")


# a slot's index entry (``l0_abstract``, keyword-indexed): its name and the words a
# question about it is asked with, so "how old is the user" or "用户多大了" finds the
# fact by its keywords even where the embedding model cannot (Chinese, mostly)
SLOT_LABELS: dict[str, tuple[str, str]] = {
    "name": ("Name (what the user is called)", "名字（用户叫什么）"),
    "age": ("Age (how old the user is)", "年龄（用户多大、几岁）"),
    "birthday": ("Birthday (when the user was born)", "生日（哪天出生）"),
    "lives_in": ("Home (where the user lives, city)", "住址（用户住在哪里、哪个城市）"),
    "works_at": (
        "Employer (where the user works, company)",
        "单位（用户在哪里上班、哪家公司）",
    ),
    "job": ("Job (what the user does for work, occupation)", "职业（用户做什么工作）"),
    "from": ("Origin (where the user is from, grew up)", "家乡（用户来自哪里、在哪长大）"),
    "diet": ("Diet (what the user eats)", "饮食（用户吃什么）"),
    "partner": ("Partner (relationship status)", "感情状况（伴侣、对象、结婚）"),
    "allergy": ("Allergy (what the user is allergic to)", "过敏（用户对什么过敏）"),
    "pet": ("Pet", "宠物"),
    "preference": ("Likes", "喜欢"),
    "dislike": ("Dislikes", "不喜欢"),
    "uses": ("Uses", "使用"),
    "decision": ("Decision", "决定"),
}


# the topics of likes and tools, as a Chinese index entry names them
TOPICS_CN = {"drink": "喝的、饮品", "food": "吃的、食物", "color": "颜色", "music": "音乐",
             "movie": "电影", "book": "书", "sport": "运动", "season": "季节", "pet": "宠物",
             "editor": "编辑器", "database": "数据库", "os": "电脑、系统",
             "programming_language": "编程语言", "tasks": "任务", "notes": "笔记"}  # fmt: skip


def index_entry(slot: str, value: str, negative: bool, chinese: bool) -> str:
    """A fact's one-line index entry: "Home (where the user lives, city): Oslo"."""
    family, _, topic = slot.partition(":")
    if family == "preference" and negative:
        family = "dislike"
    label = SLOT_LABELS.get(family, (family, family))[1 if chinese else 0]
    if topic and family not in ("allergy", "pet"):
        topic = TOPICS_CN.get(topic, topic) if chinese else topic.replace("_", " ")
        label += f"（{topic}）" if chinese else f" ({topic})"
    return f"{label}：{value}" if chinese else f"{label}: {value}"


def named_fact(slot: str, value: str, chinese: bool) -> str:
    """A fact whose clause says it badly ("Please call me Kate"), from its slot."""
    if slot == "name":
        return f"{SUBJECT_CN}叫{value}。" if chinese else f"The user's name is {value}."
    if slot == "works_at":
        return f"{SUBJECT_CN}在{value}工作。" if chinese else f"The user works at {value}."
    raise ValueError(f"no template for slot {slot}")
