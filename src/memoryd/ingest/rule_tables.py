"""The pattern tables of the rule extractor (seeds 002 and 003), apart from its logic.

Each family (biography, preference, decision, plan, habit) is a table of
regexes, a rule a line, in English and Chinese; the shared pieces (an
object, "I", a time word, a frequency) are spelled once as :data:`MACROS`.
The other patterns say what a sentence is not: a question, a request to
the assistant, a greeting, a value that points at the conversation. How
they are used is :mod:`memoryd.ingest.rules`; changing what the extractor
recognises means changing a table here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["preference", "decision", "habit", "plan", "biography"]

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
# an object that points at the conversation, not at the world ("I like the idea of a
# picnic" approves a suggestion; the value is checked after "the" is stripped)
BAD_VALUE = re.compile(
    r"^(?:it|this|that|these|those|them|him|her|one|so|what|how|when|where|why|which|who|if"
    r"|whether|(?:the\s+)?(?:way|idea|ideas|suggestions?|tips?|advice|recommendations?)"
    r"|talking|chatting|it's|that's)\b|\byou\b|\byour"
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
    # "I never knew / realized / thought …" is a surprise, not a habit
    "<MIND>": r"(?:knew|know|realized|realised|realize|thought|think|expected|imagined|considered"
    r"|noticed|heard|understood|would|could|wanted|dreamed|dreamt|meant)\b",
    # "we went with a group of friends" is who came along, not a choice
    "<COMPANY>": r"\s+(?:(?:my|our|a|some|a few|a couple of|a group of|two|three|the)\s+)*"
    r"(?:[\w-]+\s+)?(?:friends?|family|partner|wife|husband|kids|children|son|daughter|parents"
    r"|mom|dad|mother|father|sister|brother|cousins?|colleagues?|coworkers?|team|boyfriend"
    r"|girlfriend|fianc[eé]e?|group|guys|him|her|them|us)\b",
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
- | \b(?:we|I)\s+(?:went with(?!<COMPANY>)|picked|chose|opted for|settled on)\s+<OBJ>
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
- | \b(?:I|we)\s+(?:usually|always|often|normally|typically|generally|regularly|frequently|mostly|never|rarely|tend to)\s+(?!<MIND>)<OBJ>
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
