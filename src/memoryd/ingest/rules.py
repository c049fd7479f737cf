"""Rule-based fact extraction: smart ingest that works offline (seeds 002, 003).

Without an LLM a conversation still says a lot in a few fixed shapes: "I
prefer tea", "we decided to use Postgres", "I usually run at 6", "I'm going to
Rome next week", "I live in Lisbon", and their Chinese twins. Each family is a
table of regexes; a user sentence that matches becomes an :class:`ExtractedFact`
in the user's own words, so nothing is translated or paraphrased. Questions,
greetings, thanks and talk about the assistant give nothing: "what do I like?"
is not a preference.

A fact carries what a reconciler needs to supersede or skip it without an
LLM: a ``slot`` (what the fact is about), a ``value`` and three flags
(:func:`updates`, :func:`repeats`). Slots, in order of the rules:

* biography: fixed names, the same for English and Chinese: ``name``, ``age``,
  ``birthday``, ``lives_in``, ``works_at``, ``job``, ``from``, ``diet``,
  ``allergy:<thing>``, ``pet:<dog|cat>``;
* preference: ``preference:<topic>``, the topic being the first found of: the
  topic word of "my favourite X" / "我最喜欢的X" (through :data:`TOPIC_WORDS`
  when listed there: "colour" → ``color``), the object's topic in
  :data:`TOPIC_WORDS` ("tea", "咖啡" → ``drink``), the compared object's topic
  ("kombucha over coffee"), the topic of the verb before the object ("drinking
  kombucha", "喝…" → ``drink``); else the object itself, casefolded
  ("hiking"), or both compared objects sorted ("spaces/tabs");
* decision: ``decision:<topic>`` when the choice has a known topic, else None;
  habits and plans: None (a reconciler compares their text).

Pure: no I/O, no clock, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from memoryd.ingest.privacy import REDACTED, redact
from memoryd.models import Category

Kind = Literal["preference", "decision", "habit", "plan", "biography"]

MAX_FACTS = 50
USER_ROLES = frozenset(("user", "human"))
MAX_L0_CHARS, MAX_L1_CHARS, MAX_L2_CHARS = 120, 300, 2000
# seed 000 §1.1/§1.4: profile is who the user is, patterns recurring behaviour,
# events dated happenings (what a plan is). A decision is a case, not an event:
# a choice made in a context that later work should reuse, kept append-only as a
# record of a decision should be; events' admission prior (0.45) would drop most.
CATEGORY: dict[Kind, Category] = {
    "biography": Category.PROFILE,
    "preference": Category.PREFERENCES,
    "habit": Category.PATTERNS,
    "decision": Category.CASES,
    "plan": Category.EVENTS,
}
# who the user is outlasts what they like and do, which outlasts what they intend
IMPORTANCE: dict[Kind, float] = {
    "biography": 0.8,
    "preference": 0.7,
    "decision": 0.7,
    "habit": 0.6,
    "plan": 0.5,
}
# slots that hold one value at a time: a new value replaces the old one
SINGLE_VALUED = frozenset(
    ("name", "age", "birthday", "lives_in", "works_at", "job", "from", "diet")
)

_TOPICS = {
    "drink": "drink drinks beverage beverages coffee tea latte espresso cappuccino americano mocha "
    "matcha chai juice soda cola coke beer wine whisky whiskey milk 饮料 饮品 咖啡 茶 奶茶 拿铁 "
    "美式 果汁 可乐 啤酒 红酒 葡萄酒 白酒 牛奶 豆浆 汽水",
    "food": "food dish meal cuisine 食物 美食 菜",
    "color": "color colour red blue green yellow black white purple pink orange grey gray brown "
    "颜色 红色 蓝色 绿色 黄色 黑色 白色 紫色 粉色 橙色 灰色 棕色",
    "programming_language": "language python rust go golang java javascript typescript kotlin "
    "swift ruby php haskell scala elixir c++ c# 语言 编程语言",
    "editor": "editor ide vim neovim emacs vscode sublime intellij pycharm 编辑器",
    "database": "database db postgres postgresql mysql sqlite mongodb redis mariadb 数据库",
    "os": "os linux macos windows ubuntu 系统 操作系统",
    "season": "season spring summer autumn fall winter 季节 春天 夏天 秋天 冬天",
    "pet": "pet pets animal animals cat cats dog dogs 宠物 动物 猫 狗",
    "music": "music genre band song songs jazz rock pop classical hip-hop rap metal 音乐 歌 爵士 "
    "摇滚 古典",
    "movie": "movie movies film films 电影",
    "book": "book books 书",
    "sport": "sport sports 运动",
}
TOPIC_WORDS: dict[str, str] = {w: t for t, words in _TOPICS.items() for w in words.split()}
TOPIC_WORDS.update({"programming language": "programming_language", "vs code": "editor"})
# the verb before an object names its topic when the object is unknown
VERB_TOPICS = {"drink": "drink", "eat": "food", "listen": "music", "watch": "watch",
               "read": "reading", "play": "play", "喝": "drink", "吃": "food", "听": "music",
               "看": "watch", "读": "reading", "玩": "play", "打": "play"}  # fmt: skip
PETS = {"puppy": "dog", "kitten": "cat", "狗": "dog", "小狗": "dog", "猫": "cat", "小猫": "cat"}

LEAD_VERB = re.compile(
    r"^(?:to\s+)?(?P<verb>drink|eat|listen(?=ing\s+to|\s+to)|watch|read|play|us(?=e|ing)"
    r"|hav(?=e|ing)|go(?=\s+with|ing\s+with))(?:ing|e)?(?:\s+(?:to|with))?\s+"
    r"|^(?P<cn>使用|采用|喝|吃|听|看|读|玩|打|用|去)(?=.)",
    re.I,
)
LEAD_FILLER = re.compile(r"^(?:(?:a|an|the|some|my|to)\s+|上了|了)", re.I)
TAIL_FILLER = re.compile(
    r"(?:\s+(?:now|nowadays|these days|anymore|any more|lately|instead|too|as well|a lot"
    r"|very much|so much|the most|more|best|again|really|actually|then|at night|on weekends"
    r"|in the (?:morning|afternoon|evening))|了|啦|呢|吧|的|哦|呀|啊|哈|嘛|现在|而已|多了)+$",
    re.I,
)
# where an object ends: a clause break, a reason, a time, a role ("at Google as an engineer")
STOP = re.compile(
    r"\s+(?:because|since|but|though|although|while|whenever|when|if|unless|so that|which|who"
    r"|and then|and (?=(?:i|i'm|i've|i'll|my|we|it)\b)|as (?=an?|the|my)"
    r"|for (?=the|this|that|our|my|now|it)|(?:last|this|next) (?=week|month|year|weekend|\w+day)"
    r"|(?:\w+ )?\w+ ago)\b|[,;:，；：]|因为|但是|但|可是|不过|所以|而且|并且|然后",
    re.I,
)
COMPARE = re.compile(
    r"\s+(?:over|rather than|more than|instead of|than)\s+|胜过|多过|而不是|而非", re.I
)
COMPARE_BEFORE = re.compile(
    r"(?:比起|相比于?|与其|rather than|instead of)\s*(?P<other>[^，,]+?)\s*(?:来说)?[，,]?\s*$",
    re.I,
)
CHANGE = re.compile(
    r"\b(?:now|nowadays|these days|anymore|any more|no longer|instead|actually|switched|changed"
    r"|from now on)\b|现在|如今|不再|改成|换成|改为|改喝|改用|以后|其实|已经不"
    r"|不.{0,8}了(?=$|[，,。！!])",
    re.I,
)
QUESTION = re.compile(
    r"[?？]\s*$|^(?:what|which|who|whom|whose|where|when|why|how)(?:'s|'re|\s+(?:do|does|did|is"
    r"|are|am|was|were|can|could|would|will|should|have|has|much|many|old|long|often)\b)"
    r"|^(?:do|does|did|is|are|am|was|were|can|could|would|will|should|shall|have|has)\s+(?:i|you"
    r"|we|my|your|he|she|they|it|there)\b|[吗呢么嘛][。！!]?\s*$|什么|哪|谁|怎么|为什么|多少|几(?:岁|个|点|号)",
    re.I,
)
# requests to the assistant and hypotheticals state nothing about the user
META = re.compile(
    r"^(?:please\s+)?(?:tell me|remind me|show me|list|search|find|look up|can you|could you"
    r"|would you|will you|do you|did you|are you|if|unless|suppose|imagine|what if)\b"
    r"|^(?:如果|假如|要是|假设|请告诉我|告诉我)",
    re.I,
)
_NOISE_EN = (
    r"hi|hello|hey|yo|howdy|good (?:morning|afternoon|evening|night)|thanks?|thx|ty|cheers"
    r"|ok(?:ay)?|cool|great|nice|awesome|perfect|bye|goodbye|see you|got it|sure|yes|no|yeah|yep"
    r"|nope|lol|haha+|you|a lot|so much|very much|again|there|all|everyone|oh|well|so|btw"
    r"|by the way"
)
_NOISE_CN = (
    "你好|您好|嗨|哈喽|早上好|晚上好|晚安|谢谢|多谢|感谢|好的|好吧|嗯+|哈+|再见|拜拜"
    "|没事|不客气|哦|对了|你|您|啊|呀|啦|了"
)
NOISE = re.compile(rf"^(?:[\W_]|\b(?:{_NOISE_EN})\b|{_NOISE_CN})*$", re.I)
NOISE_PREFIX = re.compile(rf"^(?:(?:\b(?:{_NOISE_EN})\b|{_NOISE_CN})[\s,，!！.。~]+)+", re.I)
# an object that points at the conversation, not at the world
BAD_VALUE = re.compile(
    r"^(?:it|this|that|these|those|them|him|her|one|so|what|how|when|where|why|which|who|if"
    r"|whether|the way|the idea|talking|chatting|it's|that's)\b|\byou\b|\byour"
    r"|^(?:它|这|那|什么|怎么|的)|你|您",
    re.I,
)
# a connective left dangling when a sentence is cut between two facts
JOINER = re.compile(r"[\s,，;；]*(?:\b(?:and|but|so)|而且|并且|但是?)?[\s,，;；]*$", re.I)
# "I'm going to bed" or "to the store" is not a plan; "to the Alps next week" is
TRIVIAL_PLAN = re.compile(
    r"^(?:bed|sleep|ask|say|try|be|go|leave|check|think|need|have|see)\b"
    r"|^(?:the|a|an)\s(?!.*\b(?:tomorrow|tonight|next|this|on \w+day)\b)",
    re.I,
)


@dataclass(frozen=True)
class Rule:
    """A pattern; groups ``obj`` (required), ``neg``, ``excl``, ``topic``, ``pet``, ``elided``."""

    pattern: re.Pattern[str]
    slot: str | None  # fixed slot; None: derived from the value (see the module docstring)
    change: bool  # the wording itself says the value is new ("I moved to")
    exclusive: bool  # one value at a time ("prefer", "favourite", "switched to")


MACROS = {
    "<OBJ>": r"(?P<obj>[^,;:，；：]+)",
    "<I>": r"\bI\s+",
    "<IM>": r"\bI(?:'m|’m| am)\s+",
    # a Chinese clause may drop its subject after a comma ("我叫张三，今年30岁"): the
    # empty ``elided`` group says so, and the match then needs 我 earlier in the sentence
    "<WO>": r"(?:我(?!们)|(?<=[，,])(?P<elided>))",
    "<JOBS>": r"engineer|developer|programmer|designer|teacher|professor|doctor|nurse|student"
    r"|lawyer|manager|scientist|researcher|writer|artist|accountant|consultant|analyst|architect"
    r"|chef|journalist|photographer|musician|pharmacist|dentist|farmer|pilot|driver|founder",
    "<WHEN>": r"tomorrow|tonight|next\s+(?:week|month|year|weekend|\w+day)|this\s+(?:weekend|week"
    r"|month|year|summer|winter|spring|fall|autumn|evening|afternoon)|on\s+\w+day"
    r"|in\s+(?:two|three|a few|\d+)\s+\w+",
    "<WHEN_CN>": r"明天|后天|今晚|下周[一二三四五六日天]?|下个?星期[一二三四五六日天]?"
    r"|下个月|明年|这个?周末|周末",
    "<FREQ>": r"(?:every|each)\s+(?:day|morning|evening|night|week|weekend|month|year|\w+day)"
    r"|(?:once|twice|\d+\s+times|(?:two|three|four|five)\s+times)\s+(?:a|per)\s+(?:day|week"
    r"|month|year)|on\s+weekends|daily",
    "<FREQ_CN>": r"每(?:天|周|晚|个?月|个?星期|个?周末)(?:早上|晚上|中午)?",
}


def rules(table: str) -> list[Rule]:
    """A family from a table, a rule a line: ``slot flags | regex``.

    ``-`` is no fixed slot; flags: ``c`` the wording says the value changed,
    ``x`` the slot holds one value at a time. ``<OBJ>`` and the other
    :data:`MACROS` spell the shared pieces once.
    """
    out: list[Rule] = []
    for line in table.strip().splitlines():
        head, _, pattern = line.partition(" | ")
        slot, _, flags = head.strip().partition(" ")
        for name, text in MACROS.items():
            pattern = pattern.replace(name, text)
        compiled = re.compile(pattern.strip(), re.I)
        out.append(Rule(compiled, None if slot == "-" else slot, "c" in flags, "x" in flags))
    return out


BIOGRAPHY_RULES = rules(r"""
name       | \bmy\s+(?:first\s+|full\s+)?name\s+is\s+<OBJ>
name       | \b(?:call me|I(?:'m| am) called)\s+(?-i:(?P<obj>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?))
name       | <WO>(?:的名字(?:是|叫)|叫)<OBJ>
age        | <IM>(?P<obj>\d{1,3})(?=\s+years?\s+old|\s*(?:[,;.!]|$)|\s+(?:and|but|now)\b)
age c      | \bI(?:'ve| have)?\s+(?:just\s+)?turned\s+(?P<obj>\d{1,3})\b
age        | <WO>(?:今年|现在)?(?P<obj>\d{1,3}|[一二三四五六七八九十两百]{1,4})岁(?=了|$|[，,。！!])
birthday   | \bmy\s+birthday\s+is\s+(?:on\s+)?<OBJ>
birthday   | <I>was\s+born\s+(?:on\s+|in\s+(?=\d))<OBJ>
birthday   | <WO>的?生日是?<OBJ>
birthday   | 我(?:是|出生于|生于)(?P<obj>[^，,]*?\d[^，,]*?)(?:出生|生)?的?$
lives_in   | <I>(?:currently\s+|now\s+|still\s+)?(?:live|reside)\s+in\s+<OBJ>
lives_in   | <IM>(?:currently\s+|now\s+)?(?:living|based)\s+in\s+<OBJ>
lives_in c | \bI(?:'ve| have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)\s+(?:from\s+[^,;]+?\s+)?to\s+(?!an?\s)<OBJ>
lives_in   | <WO>(?:现在|目前|一直)?(?:住在|居住在|生活在|定居在?)<OBJ>
lives_in c | <WO>(?:已经|最近|刚|刚刚)?(?:搬到|搬去|搬家到)了?<OBJ>
lives_in   | <WO>(?:现在|目前)?在(?P<obj>[^，,]{1,15}?)(?:生活|居住|定居)
from       | <IM>(?:originally\s+)?from\s+<OBJ>
from       | <I>(?:was\s+born|grew\s+up)\s+in\s+(?!\d)<OBJ>
from       | <WO>(?:来自|出生在|生在)<OBJ>
from       | 我在(?P<obj>[^，,]{1,15}?)长大
from       | 我是(?P<obj>[^，,的]{1,10}?)人$
works_at   | <I>(?:currently\s+|now\s+|still\s+)?work\s+(?:at|for)\s+<OBJ>
works_at   | <IM>(?:currently\s+|now\s+)?(?:working|employed)\s+(?:at|for|by)\s+<OBJ>
works_at c | \bI(?:'ve| have)?\s+(?:just\s+|recently\s+)?(?:joined|started\s+(?:working\s+)?at)\s+<OBJ>
works_at   | <WO>(?:现在|目前)?在(?P<obj>[^，,]{1,20}?)(?:工作|上班|任职|实习)
works_at c | <WO>(?:已经|刚|刚刚)?(?:加入了?|入职了?)<OBJ>
diet       | <IM>(?:an?\s+)?(?P<obj>vegetarian|vegan|pescatarian)\b
diet       | 我(?:是)?(?P<obj>吃素|素食者|素食主义者)
allergy    | <IM>allergic\s+to\s+<OBJ>
allergy    | 我对(?P<obj>[^，,]{1,15}?)过敏
job        | <I>(?:currently\s+|now\s+)?work\s+as\s+(?:an?\s+)?<OBJ>
job        | \bmy\s+(?:job|profession|occupation)\s+is\s+(?:an?\s+)?<OBJ>
job        | <IM>(?:now\s+)?an?\s+(?P<obj>(?:[\w-]+\s+){0,3}?(?:<JOBS>))s?\b
job        | <WO>(?:现在|目前)?(?:是|当)(?:一名|一个|一位|个|名)<OBJ>
job        | <WO>的(?:职业|工作)是<OBJ>
job        | 我(?:现在|目前)?是(?P<obj>[^，,的]{1,8}?(?:师|员|生|家|者|经理|警察|老板|司机|护士|会计))(?=$|[，,。！!了])
pet        | <I>have\s+(?:an?|one|two)\s+(?P<pet>dog|cat|puppy|kitten)s?\s+(?:named|called)\s+<OBJ>
pet        | \bmy\s+(?P<pet>dog|cat|puppy|kitten)(?:'s\s+name\s+is|\s+is\s+(?:named|called))\s+<OBJ>
pet        | 我家?(?:有[一两]?[只条]|的)(?P<pet>小狗|小猫|狗|猫)[，,]?它?(?:叫|名叫|的名字是|名字叫)<OBJ>
""")  # noqa: E501
PREFERENCE_RULES = rules(r"""
- x  | \bmy\s+(?:all-time\s+)?(?:favou?rite|fav)\s+(?P<topic>[\w\s-]{1,30}?)\s+(?:is|are)\s+<OBJ>
- x  | ^(?P<obj>[^,;:]+?)\s+(?:is|are)\s+(?:now\s+)?my\s+(?:favou?rite|fav)\s+(?P<topic>[\w\s-]{1,30}?)(?:\s+now)?$
- x  | <WO>(?:现在)?最?(?:喜欢|爱)的(?P<topic>[^，,是]{1,8})是<OBJ>
-    | \bI\s+(?:(?:really|truly|totally|absolutely|definitely|actually|now|still|also|just|kind of|kinda|much|generally|personally|usually|always|mostly|honestly)\s+)*(?P<neg>(?:don't|do not|didn't|no longer|never)\s+(?:really\s+|much\s+)?)?(?P<verb>like|love|enjoy|adore|hate|dislike|detest|can't stand|cannot stand|(?P<excl>prefer))s?\s+<OBJ>
- x  | \bI(?:'d| would)\s+(?:much\s+)?rather\s+<OBJ>
-    | <IM>(?P<neg>not\s+)?(?:really\s+)?(?:into|a\s+(?:big\s+|huge\s+)?fan\s+of)\s+<OBJ>
- cx | \bI(?:'ve| have)?\s+(?:just\s+|recently\s+)?(?:switched|changed|converted)\s+(?:from\s+(?P<other>[^,;]+?)\s+)?to\s+<OBJ>
-    | <WO>(?:现在|如今|最近|其实|真的|很|非常|特别|超|挺|比较|一直|还是|也|都|还|已经|真)*(?P<excl>更|最)?(?P<neg>不再|不太|不怎么|不|没那么)?(?:很|太|再|怎么|那么)*(?P<verb>喜欢|爱(?!人|好)|偏爱|偏好|讨厌|厌恶|受不了|热爱|钟爱)<OBJ>
- cx | 我(?:现在|已经|最近)*把(?P<other>[^，,]+?)(?:换|改)(?:成|为)了?<OBJ>
- cx | 我(?:现在|已经|最近)*(?:改|换)(?:成|为)?了?<OBJ>
""")  # noqa: E501
NEG_VERBS = frozenset(
    ("hate", "dislike", "detest", "can't stand", "cannot stand", "讨厌", "厌恶", "受不了")
)
DECISION_RULES = rules(r"""
- | \b(?:we|I)(?:'ve| have)?\s+(?:finally\s+|just\s+)?(?:decided|agreed|settled)\s+(?:to|on|that|upon)?\s*<OBJ>
- | \blet(?:'s|’s| us)\s+(?:go with|use|stick with|pick|choose|adopt|switch to)\s+<OBJ>
- | \b(?:we|I)(?:'ll| will|'re going to| are going to|'m going to| am going to)\s+(?:go with|use|stick with|adopt|pick|choose)\s+<OBJ>
- | \b(?:we|I)\s+(?:went with|picked|chose|opted for|settled on)\s+<OBJ>
- | \bthe decision is\s+(?:to\s+)?<OBJ>
- | 我们?(?:已经|最后|最终|还是)?(?:决定|商定|定了|选定)了?<OBJ>
- | (?:我们|那)?就用<OBJ>
- | 我们?(?:最后|最终)?(?:选择|选)了?<OBJ>
""")  # noqa: E501
PLAN_RULES = rules(r"""
- | \b(?:I|we)(?:'m| am|'re| are)\s+(?:going|planning|hoping|intending|about)\s+(?:to|on)\s+<OBJ>
- | \b(?:I|we)\s+(?:plan|intend|hope|aim)\s+to\s+<OBJ>
- | \b(?:I|we)(?:'m| am|'re| are)\s+planning\s+(?:an?|the|my|our)\s+<OBJ>
- | \bmy\s+plan\s+is\s+(?:to\s+)?<OBJ>
- | \b(?:I|we)(?:'ll| will| shall)\s+(?P<obj>[^,;:]*\b(?:<WHEN>)\b[^,;:]*)
- | \b(?:<WHEN>)\s*,?\s*(?:I|we)(?:'ll| will|'m going to| am going to)?\s+<OBJ>
- | 我们?正?(?:打算|计划|准备)<OBJ>
- | 我的计划是<OBJ>
- | (?:<WHEN_CN>)[，,]?我们?(?:要|会|将|打算|准备|想)?<OBJ>
- | 我们?(?:<WHEN_CN>)(?:要|会|将|打算|准备|想)<OBJ>
""")
HABIT_RULES = rules(r"""
- | \b(?:I|we)\s+(?:usually|always|often|normally|typically|generally|regularly|frequently|mostly|never|rarely|tend to)\s+<OBJ>
- | \b(?:<FREQ>)\s*,?\s*(?:I|we)\s+<OBJ>
- | \b(?:I|we)\s+(?!(?:will|'ll|am|was|did|would|could|should|might)\b)(?P<obj>(?:[\w']+\s+){1,6}?(?:<FREQ>)\b[^,;:]*)
- | 我们?(?:通常|平时|一般|经常|常常|总是|往往|习惯|一向|<FREQ_CN>)<OBJ>
- | <FREQ_CN>[，,]?我们?<OBJ>
""")  # noqa: E501
# priority order: where two matches overlap, the earlier family wins
FAMILIES: tuple[tuple[Kind, list[Rule]], ...] = (
    ("biography", BIOGRAPHY_RULES),
    ("preference", PREFERENCE_RULES),
    ("decision", DECISION_RULES),
    ("plan", PLAN_RULES),
    ("habit", HABIT_RULES),
)
SENTENCE_BREAK = re.compile(r"(?<=[.!?…])\s+|(?<=[。！？；;!?])|\n+")
ABBREVIATIONS = ("mr.", "mrs.", "ms.", "dr.", "st.", "e.g.", "i.e.", "vs.", "etc.", "jr.", "prof.")


@dataclass(frozen=True)
class ExtractedFact:
    """An atomic fact in the user's own words, with what a reconciler needs to place it."""

    content: str
    l0_abstract: str
    l1_overview: str
    l2_content: str
    category: Category
    tags: list[str]
    importance: float
    kind: Kind
    slot: str | None
    value: str
    source_text: str
    negative: bool = False  # "I hate X", "我不喜欢X": the value is disliked
    change: bool = False  # "now", "no longer", "moved to", "现在": replaces what held before
    exclusive: bool = False  # the slot holds one value at a time ("prefer", "lives_in")


def split_sentences(text: str) -> list[str]:
    """Sentences (EN ``.!?``, CN ``。！？；``, newlines), not broken after "Dr." or "e.g."."""
    out: list[str] = []
    for piece in SENTENCE_BREAK.split(text):
        piece = piece.strip()
        if out and out[-1].lower().endswith(ABBREVIATIONS):
            out[-1] = f"{out[-1]} {piece}".strip()
        elif piece:
            out.append(piece)
    return out


def is_chatter(sentence: str) -> bool:
    """Greetings, thanks, questions and requests to the assistant: never facts."""
    s = NOISE_PREFIX.sub("", sentence.strip())
    return bool(NOISE.match(sentence.strip()) or QUESTION.search(s) or META.match(s))


def topic_of(text: str) -> str | None:
    """The topic of an object: of the whole of it, its last word, or a Chinese suffix."""
    t = " ".join(text.casefold().split())
    if t in TOPIC_WORDS:
        return TOPIC_WORDS[t]
    if " " in t:
        return TOPIC_WORDS.get(t.rsplit(" ", 1)[1])
    return next((TOPIC_WORDS[t[-n:]] for n in (4, 3, 2, 1) if t[-n:] in TOPIC_WORDS), None)


def clean_value(raw: str, strip_verb: bool) -> tuple[str, str | None, str | None]:
    """``(value, compared object, verb topic)``; the value is a substring of ``raw``."""
    value = STOP.split(raw, maxsplit=1)[0]
    other: str | None = None
    parts = COMPARE.split(value, maxsplit=1)
    if len(parts) == 2:
        value, other = parts[0], clean_value(parts[1], strip_verb)[0] or None
    verb_topic = None
    value = value.strip(" \t\"'“”‘’.!?。！？")
    for _ in range(3):  # "to drink the …", "了喝…"
        value = TAIL_FILLER.sub("", value).strip()
        lead = LEAD_VERB.match(value) if strip_verb else None
        if lead:
            verb_topic = verb_topic or VERB_TOPICS.get((lead["verb"] or lead["cn"]).lower())
            value = value[lead.end() :]
        value = LEAD_FILLER.sub("", value).strip(" \"'“”‘’")
    return value, other, verb_topic


def slot_for(
    kind: Kind, rule: Rule, m: re.Match[str], value: str, other: str | None, verb: str | None
) -> str | None:
    """The slot rules of the module docstring, in its order."""
    groups = m.groupdict()
    if kind == "biography":
        if rule.slot == "pet":
            return f"pet:{PETS.get(groups['pet'].lower(), groups['pet'].lower())}"
        return f"allergy:{value.casefold()}" if rule.slot == "allergy" else rule.slot
    named = groups.get("topic")
    topic = (
        (named and (topic_of(named) or " ".join(named.casefold().split())))
        or topic_of(value)
        or (other and topic_of(other))
    )
    if kind == "decision":
        return f"decision:{topic}" if topic else None
    if kind != "preference":
        return None
    names = sorted({" ".join(v.casefold().split()) for v in (value, other) if v})
    return f"preference:{topic or verb or '/'.join(names)}"


Hit = tuple[int, int, Kind, Rule, re.Match[str], str, str | None, str | None]


def find_hits(sentence: str) -> list[Hit]:
    """Every family's matches, the earlier family's kept where two overlap, in sentence order."""
    hits: list[Hit] = []
    for kind, family in FAMILIES:
        for rule in family:
            for m in rule.pattern.finditer(sentence):
                before = sentence[: m.start()]
                elided = "elided" in m.re.groupindex and m["elided"] is not None
                if elided and ("我" not in before or re.search("[他她它你]", before)):
                    continue
                value, other, verb_topic = clean_value(m["obj"], kind in ("preference", "decision"))
                if not value or len(value) > 80 or BAD_VALUE.search(value) or REDACTED in value:
                    continue
                if kind == "plan" and TRIVIAL_PLAN.match(m["obj"].strip()):
                    continue
                end = m.start("obj") + m["obj"].find(value) + len(value)
                if not any(m.start() < e and s < end for s, e, *_ in hits):
                    hits.append((m.start(), end, kind, rule, m, value, other, verb_topic))
    return sorted(hits, key=lambda h: h[0])


def sentence_facts(sentence: str, message: str) -> list[ExtractedFact]:
    """The facts one user sentence states; the whole sentence is the content of a lone one."""
    if is_chatter(sentence):
        return []
    hits = find_hits(sentence)
    facts: list[ExtractedFact] = []
    for i, (start, end, kind, rule, m, value, other, verb_topic) in enumerate(hits):
        clause_start = hits[i - 1][1] if i else 0
        clause_end = hits[i + 1][0] if i + 1 < len(hits) else len(sentence)
        text = sentence if len(hits) == 1 else sentence[start : max(end, min(m.end(), clause_end))]
        content = JOINER.sub("", NOISE_PREFIX.sub("", text)).strip() or text.strip()
        if other is None and (before := COMPARE_BEFORE.search(sentence[clause_start:start])):
            other = clean_value(before["other"], True)[0] or None
        slot = slot_for(kind, rule, m, value, other, verb_topic)
        verb = (m.groupdict().get("verb") or "").lower()
        facts.append(
            ExtractedFact(
                content=content,
                l0_abstract=" ".join(content.split())[:MAX_L0_CHARS],
                l1_overview=" ".join(sentence.split())[:MAX_L1_CHARS],
                l2_content=message.strip() if len(message.strip()) <= MAX_L2_CHARS else sentence,
                category=CATEGORY[kind],
                tags=[kind, slot.split(":", 1)[-1]] if slot else [kind],
                importance=IMPORTANCE[kind],
                kind=kind,
                slot=slot,
                value=value,
                source_text=message,
                negative=bool(m.groupdict().get("neg")) or verb in NEG_VERBS,
                change=rule.change or bool(CHANGE.search(sentence[clause_start:clause_end])),
                exclusive=rule.exclusive
                or bool(m.groupdict().get("excl"))
                or other is not None
                or slot in SINGLE_VALUED,
            )
        )
    return facts


def extract_facts(
    messages: list[tuple[str, str]], max_facts: int = MAX_FACTS
) -> list[ExtractedFact]:
    """Facts the user stated, in the order said, at most ``max_facts`` (the latest ones).

    Only user turns count: what the assistant says is context, not the user's
    facts. A fact said twice in the batch (:func:`repeats`) is kept once, where
    first said. Private blocks are redacted first, so nothing private becomes a
    fact.
    """
    facts: list[ExtractedFact] = []
    seen: set[tuple[str | bool | None, ...]] = set()
    for role, text in messages:
        public = redact(text) if role.strip().lower() in USER_ROLES else None
        for sentence in split_sentences(public or ""):
            for fact in sentence_facts(sentence, public or ""):
                if fact_key(fact) not in seen:
                    seen.add(fact_key(fact))
                    facts.append(fact)
    return facts[-max_facts:] if max_facts > 0 else []


def fact_key(fact: ExtractedFact) -> tuple[str | bool | None, ...]:
    """What makes two facts the same: slot, value and polarity, or the words without a slot."""
    if fact.slot is None:
        return (fact.kind, " ".join(fact.content.casefold().split()).rstrip(".!。！"))
    return (fact.slot, fact.value.casefold(), fact.negative)


def repeats(new: ExtractedFact, old: ExtractedFact) -> bool:
    """``new`` says nothing ``old`` did not: skip it (or count it as support)."""
    return fact_key(new) == fact_key(old)


def updates(new: ExtractedFact, old: ExtractedFact) -> bool:
    """``new`` replaces ``old``: supersede it, keeping it reachable as of its time.

    Same slot, and either the same value with the other polarity ("I don't
    like coffee anymore"), or another liked value where the new fact says it
    changed or the slot holds one value at a time. Disliking Y never cancels
    liking X.
    """
    if new.slot is None or new.slot != old.slot:
        return False
    if new.value.casefold() == old.value.casefold():
        return new.negative != old.negative
    return not new.negative and (new.change or new.exclusive)
