"""What a statement is about, by meaning: the attribute of the user it gives a value of.

Phrase rules (:mod:`memoryd.ingest.rules`) read a few fixed shapes; people
say a change in many more ("jumped ship to Stripe", "提了台卡罗拉"). What
those sentences share is what they are about: where the user lives, works,
what they drive, eat, code in. Each attribute here has a handful of short
example statements in English and Chinese; a statement is about the
attribute whose examples its embedding is closest to, when that is close
enough and clearly closer than the next (the bundled embedder, no LLM).

Two structural readings decide whether the statement can change the user's
value at all:

* **subject**: a statement whose subject is another person ("my sister
  lives in Boston", "我老公在腾讯") is that person's, never the user's;
* **modality**: a plan, wish or question ("thinking about moving to
  Seattle", "打算明年换工作", "any tips for Denver?") changes nothing.

A statement of a single-valued attribute by the user, as a fact, retires
every older current memory of that attribute, raw turns and distilled facts
alike (:func:`retire_replaced`): the newest said wins, by when it was said,
so an old chat imported late becomes the history it is instead of the
current value. Multi-valued attributes (pets, hobbies, languages spoken)
accumulate. Each memory read so is marked ``about:<attribute>`` (found again
through the marks index), with ``about:other`` or ``about:plan`` beside it
when it is not the user's fact.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import numpy.typing as npt

from memoryd.models import (
    ABOUT_PREFIX,
    LIKING_MARK,
    NOT_A_VALUE_MARKS,
    OTHER_MARK,
    PAST_MARK,
    PLAN_MARK,
    Memory,
    MemoryType,
    utcnow,
)
from memoryd.statements import (
    changes_value,
    is_about_user,
    is_ending_only,
    is_liking,
    is_other,
    is_past,
    is_plan,
    is_question,
    said,
)
from memoryd.store import MemoryFilter

if TYPE_CHECKING:
    from memoryd.tenancy.memories import TenantMemories

# cosine to the closest example, and its lead over the next attribute's (tuned on half "tune")
MIN_SIMILARITY = 0.35
MIN_MARGIN = 0.02
# a second attribute named by its words counts when this close to the first
SECOND = 0.1
# memories of one attribute read back to retire (a space states each a few times)
MAX_HOLDERS = 200

# attribute -> (single-valued, example statements)
ATTRIBUTES: dict[str, tuple[bool, tuple[str, ...]]] = {
    "residence": (
        True,
        (
            "I live in Madrid.",
            "We moved to a new city last month.",
            "I relocated to another country for good.",
            "My home is in Toronto now.",
            "I'm based in London these days.",
            "我住在上海。",
            "我们搬家到成都了。",
            "现在定居在深圳。",
        ),
    ),
    "work": (
        True,
        (
            "I work as a nurse at the hospital.",
            "I got a new job at Google.",
            "I joined a startup as an engineer.",
            "I was hired by a bank.",
            "I changed jobs and now work at Amazon.",
            "I quit my job and started at another company.",
            "我在腾讯上班。",
            "我换工作了，去了一家新公司。",
            "我是一名老师。",
            "我入职了一家互联网公司做产品经理。",
        ),
    ),
    "diet": (
        True,
        (
            "I am vegetarian.",
            "I follow a vegan diet.",
            "I eat meat again.",
            "I'm on a keto diet.",
            "I don't eat gluten.",
            "我吃素。",
            "我开始吃肉了。",
            "我在减肥，只吃低碳水的东西。",
        ),
    ),
    "car": (
        True,
        (
            "I drive a Honda Civic.",
            "I bought a new car, a Tesla.",
            "I sold my car.",
            "My car is a Toyota.",
            "我开的是一辆丰田。",
            "我买了新车，换成了比亚迪。",
            "我把车卖了。",
        ),
    ),
    "phone": (
        True,
        (
            "My phone is an iPhone.",
            "I switched to an Android phone.",
            "I got a new Samsung phone.",
            "我用的手机是华为。",
            "我换了个新手机，小米的。",
        ),
    ),
    "editor": (
        True,
        (
            "I code in VS Code.",
            "My editor is Vim.",
            "I switched my IDE to IntelliJ.",
            "I write code in Emacs.",
            "我写代码用VS Code。",
            "我的编辑器换成了Vim。",
        ),
    ),
    "drink": (
        True,
        (
            "I drink coffee every morning.",
            "I switched from coffee to tea.",
            "I quit drinking alcohol.",
            "My usual drink is beer.",
            "我每天早上喝咖啡。",
            "我戒酒了。",
            "我改喝茶了。",
        ),
    ),
    "partner": (
        True,
        (
            "My girlfriend's name is Anna.",
            "I'm married to David.",
            "We broke up.",
            "I'm dating someone new.",
            "I got engaged.",
            "我有女朋友了。",
            "我们分手了。",
            "我结婚了。",
        ),
    ),
    "gym": (
        True,
        (
            "I go to the gym at Equinox.",
            "I joined a new gym.",
            "I cancelled my gym membership.",
            "我办了一张健身房的卡。",
            "我换了一家健身房。",
        ),
    ),
    "school": (
        True,
        (
            "I study at the university.",
            "I'm doing a master's degree.",
            "I got into a PhD program.",
            "我在大学读研究生。",
            "我考上了研究生。",
        ),
    ),
    "team": (
        True,
        (
            "I'm a fan of the Lakers.",
            "My favourite football team is Arsenal.",
            "I support the Yankees.",
            "我是湖人的球迷。",
            "我支持皇马。",
        ),
    ),
    "music_app": (
        True,
        (
            "I listen to music on Spotify.",
            "I switched to Apple Music.",
            "我用网易云听歌。",
            "我听歌换成了QQ音乐。",
        ),
    ),
    "smoking": (
        True,
        (
            "I smoke a pack a day.",
            "I quit smoking.",
            "我抽烟。",
            "我戒烟了。",
        ),
    ),
    "food": (
        True,
        (
            "My favourite food is sushi.",
            "I love Italian cuisine.",
            "我最喜欢吃火锅。",
            "我爱吃湘菜。",
        ),
    ),
    "eyewear": (
        True,
        (
            "I wear glasses.",
            "I switched to contact lenses.",
            "I had laser eye surgery.",
            "我戴眼镜。",
            "我做了近视手术。",
        ),
    ),
    "instrument": (
        False,
        (
            "I play the piano.",
            "I started learning the violin.",
            "我会弹钢琴。",
            "我在学吉他。",
        ),
    ),
    "pet": (
        False,
        (
            "I have a dog named Rex.",
            "We adopted a cat.",
            "我家养了一只猫。",
            "我养了一条狗。",
        ),
    ),
    "hobby": (
        False,
        (
            "I love hiking on weekends.",
            "I started learning the guitar.",
            "My hobby is painting.",
            "我喜欢周末去爬山。",
            "我最近开始学画画。",
        ),
    ),
    "language": (
        False,
        (
            "I speak Spanish.",
            "I'm learning Japanese.",
            "我会说日语。",
            "我在学西班牙语。",
        ),
    ),
}

# words that name an attribute's subject matter: English words (bounded by non-letters, so
# "GoLand" is found inside Chinese text too) and Chinese ones. In English each found adds
# CUE_BONUS to the attribute's similarity; Chinese is read by these words alone, the bundled
# embedder reading English only. Written from the tuning half, measured on the confirming.
CUE_BONUS = 0.15
_CUE_WORDS: dict[str, tuple[str, str]] = {
    "residence": (
        r"liv(?:e|es|ed|ing)|mov(?:e|ed|ing)|relocat\w*|based in|home|apartment|flat|house|"
        r"neighbou?rhood|city|settled|(?:i'?m|i am|we'?re|we are)\s+(?:now\s+)?in",
        r"住|搬|定居|落户|租房|老家|安顿|调到|城市",
    ),
    "work": (
        r"work(?:s|ed|ing)?|job|hired|joined|company|startup|employer|quit|promot\w*|career|"
        r"position|role|office|intern\w*|left \w+ for|started at|new gig|"
        r"as an? (?:\w+ )?\w+(?:er|or|ist|ant|ian|ive)",
        r"上班|工作|入职|跳槽|跳到|跳去|公司|辞职|离职|单位|岗位|实习|创业|打工|开了家|教职|"
        r"(?:做|当|是一名|是个)[^，。,.!！]{0,8}(?:开发|工程师|经理|老师|教师|医生|护士|律师|会计|"
        r"策划|运营|设计|算法|销售|研究|助理|分析师|咨询|程序员|主管|总监|编辑|记者|厨师|司机|后端|"
        r"前端|产品)",
    ),
    "car": (
        r"driv(?:e|es|ing)|drove|car|truck|suv|sedan|jeep|tesla|toyota|honda|bmw|ford|subaru|"
        r"prius|corolla|civic",
        r"车|驾照|辆|开的是|丰田|本田|大众|宝马|奔驰|奥迪|特斯拉|比亚迪|蔚来|小鹏|吉利|别克|马自达|日产",
    ),
    "phone": (r"phone|iphone|android|pixel|galaxy|smartphone", r"手机"),
    "editor": (
        r"editor|ide|vim|neovim|emacs|vs ?code|intellij|sublime|pycharm|webstorm|goland|"
        r"cursor|zed|helix",
        r"编辑器|写代码",
    ),
    "drink": (
        r"coffee|tea|beer|wine|drink\w*|alcohol|espresso|latte|whiskey|soda|booze|sober|ipa",
        r"咖啡|茶|酒|喝|美式|拿铁|饮料|奶茶",
    ),
    "diet": (
        r"vegan|vegetarian|meat|keto|gluten|diet|pescatarian|paleo|carbs?",
        r"吃素|吃肉|素食|饮食|减肥|忌口|生酮|戒糖",
    ),
    "food": (
        r"food|cuisine|dish|sushi|pizza|ramen|tacos|curry",
        r"川菜|粤菜|湘菜|鲁菜|日料|火锅|烧烤|菜系|口味",
    ),
    "partner": (
        r"girlfriend|boyfriend|married|wife|husband|dating|engaged|broke up|single|"
        r"divorc\w*|fianc\w*|partner",
        r"男朋友|女朋友|结婚|分手|离婚|对象|单身|脱单",
    ),
    "gym": (r"gym|fitness|workouts?|crossfit|membership", r"健身|团课|私教|办卡"),
    "school": (
        r"university|college|degree|phd|master'?s|school|grad|semester|enrolled",
        r"读研|大学|研究生|博士|读博|本科|学校|考研|上学|入学|报到|学院|专业",
    ),
    "team": (r"fan of|support(?:er|ing)?|team|club|season tickets?", r"球迷|主队|队"),
    "music_app": (
        r"spotify|apple music|music|playlist|streaming",
        r"听歌|音乐|歌单|网易云",
    ),
    "smoking": (r"smok\w*|cigarettes?|vap\w*|nicotine", r"抽烟|吸烟|戒烟|烟"),
    "eyewear": (r"glasses|contacts|contact lenses|lasik|eyesight", r"眼镜|隐形|近视|飞秒"),
    "pet": (r"dog|cat|puppy|kitten|pet|adopted", r"狗|猫|宠物"),
    "hobby": (
        r"hobby|hiking|painting|climbing|knitting|pottery|photography|running|surfing|"
        r"skiing|cycling",
        r"爱好|画画|爬山|羽毛球|网球|滑雪|钓鱼|摄影|跑步|晨跑|游泳|潜水|飞盘|入坑|迷上",
    ),
    "instrument": (
        r"piano|guitar|violin|drums|cello|ukulele|instrument|saxophone|flute|bass",
        r"钢琴|吉他|小提琴|二胡|尤克里里|架子鼓|乐器",
    ),
    "language": (
        r"speak|spanish|japanese|french|german|mandarin|language|fluent",
        r"说.{0,3}语|学.{0,3}语|日语|英语|法语|德语|西班牙语",
    ),
}
CUES: dict[str, re.Pattern[str]] = {
    name: re.compile(rf"(?<![a-z])(?:{en})(?![a-z])|{zh}", re.IGNORECASE)
    for name, (en, zh) in _CUE_WORDS.items()
}
_CJK = re.compile(r"[\u3400-\u9fff]")
# a statement mostly in these characters is read by its words (the share of its characters)
CJK_SHARE = 0.3
# sentences of a message: each is read on its own
_SENTENCE = re.compile(r"(?<=[.!?])\s+|[。！？!?\n～~]+")


@dataclass(frozen=True)
class Part:
    """One sentence's reading: the attributes it gives values of, and how it gives them."""

    attributes: tuple[str, ...]
    liking: bool = False  # a liking that says no change: it stands beside the others
    past: bool = False  # what held once, told as such ("I used to live in Paris")
    ends_only: bool = False  # a value over and none new: the rules know which one
    other: bool = False  # another person's fact
    plan: bool = False  # a plan or wish, not what holds

    def replacing(self) -> list[str]:
        """The single-valued attributes whose user value this sentence replaces."""
        if self.other or self.plan or self.liking or self.past or self.ends_only:
            return []
        return [a for a in self.attributes if ATTRIBUTES[a][0]]


@dataclass(frozen=True)
class Reading:
    """What a statement (a message, a memory) says of whom, sentence by sentence."""

    parts: tuple[Part, ...] = ()

    @property
    def attributes(self) -> list[str]:
        return list(dict.fromkeys(a for p in self.parts for a in p.attributes))

    def replacing(self) -> list[str]:
        return list(dict.fromkeys(a for p in self.parts for a in p.replacing()))

    def marks(self) -> list[str]:
        """``about:<attribute>`` for each; ``about:other`` (``plan``, ``past``, ``liking``)
        when every sentence that names one is another person's (a plan, told as past, a
        liking)."""
        out = [ABOUT_PREFIX + a for a in self.attributes]
        # whose and how: read from the sentences that name an attribute, else from them all
        named = [p for p in self.parts if p.attributes] or list(self.parts)
        if named:
            for mark, flag in (
                (OTHER_MARK, "other"),
                (PLAN_MARK, "plan"),
                (PAST_MARK, "past"),
                (LIKING_MARK, "liking"),
            ):
                if all(getattr(p, flag) for p in named):
                    out.append(mark)
        return out


class Prototypes:
    """The attributes' example vectors for one embedder, embedded once per process."""

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _cache: ClassVar[dict[str, tuple[list[str], npt.NDArray[np.float32]]]] = {}

    @classmethod
    def of(cls, mine: TenantMemories) -> tuple[list[str], npt.NDArray[np.float32]]:
        name = mine.engine.embedder.name
        with cls._lock:
            found = cls._cache.get(name)
        if found is not None:
            return found
        labels = [a for a, (_, examples) in ATTRIBUTES.items() for _ in examples]
        texts = [e for _, examples in ATTRIBUTES.values() for e in examples]
        vectors = _unit(mine.embed(texts))
        with cls._lock:
            cls._cache[name] = (labels, vectors)
        return labels, vectors


def _unit(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.asarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)


def read(texts: Sequence[str], mine: TenantMemories) -> list[Reading]:
    """The reading of each statement, sentence by sentence: a question or a plan beside a
    statement ("Moved to Denver! Any tips?") leaves the statement what it is."""
    sentences = [[p for p in _SENTENCE.split(said(t)) if p.strip()] for t in texts]
    english = [p for parts in sentences for p in parts if not _is_cjk(p)]
    rows: dict[str, list[float]] = {}
    labels: list[str] = []
    if english:
        labels, examples = Prototypes.of(mine)
        unique = list(dict.fromkeys(english))
        sims = _unit(mine.embed(unique)) @ examples.T
        rows = {text: row.tolist() for text, row in zip(unique, sims, strict=True)}
    out = []
    for parts in sentences:
        read_parts = []
        for words in parts:
            if is_question(words) or not is_about_user(words):
                continue
            cued = [name for name, cue in CUES.items() if cue.search(words)]
            found = cued if words not in rows else _by_meaning(labels, rows[words], cued)
            read_parts.append(
                Part(
                    tuple(a for a in found if a in ATTRIBUTES),
                    liking=is_liking(words),
                    past=is_past(words),
                    ends_only=is_ending_only(words),
                    other=is_other(words),
                    plan=is_plan(words),
                )
            )
        out.append(Reading(tuple(read_parts)))
    return out


def _is_cjk(words: str) -> bool:
    return len(_CJK.findall(words)) >= CJK_SHARE * max(1, len(words.strip()))


def _by_meaning(labels: list[str], row: list[float], cued: list[str]) -> list[str]:
    """The attribute whose examples are nearest (with its words' bonus), when near enough
    and clearly nearest; then any other attribute named by its words and nearly as near."""
    best: dict[str, float] = {}
    for label, sim in zip(labels, row, strict=True):
        best[label] = max(best.get(label, -1.0), sim)
    for label in cued:
        if label in best:
            best[label] += CUE_BONUS
    ranked = sorted(best.items(), key=lambda kv: kv[1], reverse=True)
    (top, score), runner_up = ranked[0], ranked[1][1] if len(ranked) > 1 else -1.0
    if score < MIN_SIMILARITY or score - runner_up < MIN_MARGIN:
        return []
    also = [a for a, v in ranked[1:] if a in cued and v >= max(MIN_SIMILARITY, score - SECOND)]
    return [top, *also]


def _same_conversation(a: Memory, b: Memory) -> bool:
    """Two memories of one conversation: a turn and the fact distilled from it, or two
    readings of one message, never retire each other here (the rules compare them)."""
    return a.session_id is not None and a.session_id == b.session_id


def said_at(memory: Memory) -> datetime:
    return memory.valid_from or memory.created_at


def retire_replaced(mine: TenantMemories, memory: Memory, reading: Reading) -> int:
    """For each attribute whose value ``memory`` replaces: retire the current memories of
    it said before ``memory``; or ``memory`` itself when a newer one holds it. The number
    retired."""
    from memoryd.ingest.apply import retire

    retired = 0
    for attribute in reading.replacing():
        holders, _ = mine.store.list_memories(
            mine.tenant_id,
            [mine.space_id],
            MemoryFilter(marks=[ABOUT_PREFIX + attribute], live_at=utcnow()),
            limit=MAX_HOLDERS,
            with_total=False,
        )
        users = [
            h
            for h in holders
            if h.id != memory.id
            and not NOT_A_VALUE_MARKS & set(h.marks)
            and not _same_conversation(h, memory)
        ]
        when = said_at(memory)
        newer = [h for h in users if said_at(h) > when and changes_value(h.content, memory.content)]
        if newer:  # said before what holds now: history from the start
            latest = min(newer, key=said_at)
            retire(mine, memory, latest, said_at(latest))
            return retired + 1
        for old in users:
            if said_at(old) < when and changes_value(memory.content, old.content):
                retire(mine, old, memory, when)
                retired += 1
    return retired


def read_session(mine: TenantMemories, session_id: str | None) -> int:
    """Read the statements of a conversation not read yet (the user's turns and the facts
    distilled from them), mark each with what it is about, and retire what each replaces.
    The number of memories retired."""
    if not session_id:
        return 0
    rows, _ = mine.store.list_memories(
        mine.tenant_id,
        [mine.space_id],
        MemoryFilter(session_id=session_id, live_at=utcnow()),
        limit=MAX_HOLDERS,
        sort="created_at",
        order="asc",
        with_total=False,
    )
    unread = [
        m
        for m in rows
        if not any(k.startswith(ABOUT_PREFIX) for k in m.marks)
        and (m.memory_type is not MemoryType.SESSION or m.content.startswith("user: "))
    ]
    if not unread:
        return 0
    texts = [said(m.content) for m in unread]
    readings = read(texts, mine)
    retired = 0
    for memory, reading in zip(unread, readings, strict=True):
        marks = reading.marks() or [ABOUT_PREFIX + "none"]
        mine.store.add_marks(memory.id, marks)  # bookkeeping: no new version of the memory
        memory = memory.model_copy(update={"marks": [*memory.marks, *marks]})
        if memory.is_live(utcnow()):
            retired += retire_replaced(mine, memory, reading)
    return retired
