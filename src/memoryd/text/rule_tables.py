"""The vocabulary of the rule extractor (seeds 002 and 003), apart from its logic.

Topics, the pieces a pattern is spelled from (:data:`MACROS`), and the
patterns that say what a sentence or a value is not: a question, a request
to the assistant, a greeting, a lead-in ("Big news:", "记住："), a value
that points at the conversation. The families themselves (one regex a
line) are in :mod:`memoryd.ingest.rule_families`; how both are used is
:mod:`memoryd.ingest.rules`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["preference", "decision", "habit", "plan", "biography"]
# the roles whose turns are the user's own words (the rest is context)
USER_ROLES = frozenset(("user", "human"))


def words(text: str) -> frozenset[str]:
    """A set of words written as one string, as the tables are easier to read."""
    return frozenset(text.split())


_TOPICS = {
    "drink": "drink drinks beverage beverages coffee tea latte espresso cappuccino americano mocha "
    "matcha chai juice soda cola coke beer wine whisky whiskey milk decaf 饮料 饮品 咖啡 茶 奶茶 "
    "拿铁 美式 果汁 可乐 啤酒 红酒 葡萄酒 白酒 牛奶 豆浆 汽水 绿茶 红茶",
    "food": "food dish meal cuisine 食物 美食 菜",
    "color": "color colour red blue green yellow black white purple pink orange grey gray brown "
    "颜色 红色 蓝色 绿色 黄色 黑色 白色 紫色 粉色 橙色 灰色 棕色",
    "programming_language": "language python rust go golang java javascript typescript kotlin "
    "swift ruby php haskell scala elixir c++ c# 语言 编程语言",
    "editor": "editor ide vim neovim emacs vscode sublime intellij pycharm cursor 编辑器",
    "database": "database db postgres postgresql mysql sqlite mongodb redis mariadb 数据库",
    "os": "os linux macos windows ubuntu mac macbook pc laptop computer 系统 操作系统 电脑",
    "season": "season spring summer autumn fall winter 季节 春天 夏天 秋天 冬天",
    "pet": "pet pets animal animals cat cats dog dogs 宠物 动物 猫 狗",
    "music": "music genre band bands artist singer song songs album jazz rock pop classical "
    "hip-hop rap metal 音乐 歌 歌手 乐队 爵士 摇滚 古典",
    "movie": "movie movies film films 电影",
    "book": "book books author 书",
    "sport": "sport sports 运动",
    "tasks": "tasks task todo todos to-dos 任务 待办",
    "notes": "notes note notebook 笔记",
    "browser": "browser chrome firefox safari 浏览器",
    "phone": "phone iphone android 手机",
}
TOPIC_WORDS: dict[str, str] = {w: t for t, words in _TOPICS.items() for w in words.split()}
TOPIC_WORDS.update(
    {"programming language": "programming_language", "vs code": "editor", "visual studio": "editor"}
)
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
LEAD_FILLER = re.compile(r"^(?:(?:a|an|the|some|my|our|to)\s+|上了|了)", re.I)
TAIL_FILLER = re.compile(
    r"(?:\s+(?:now|nowadays|these days|anymore|any more|lately|instead|too|as well|a lot"
    r"|very much|so much|the most|more|best|again|really|actually|then|at night|on weekends"
    r"|in the (?:morning|afternoon|evening)|from now on|full[- ]time|for (?:a|one|two|three|\d+) "
    r"\w+)|了|啦|呢|吧|的|哦|呀|啊|哈|嘛|现在|而已|多了)+$",
    re.I,
)
# the verbs a clause may start with after "and", its subject left out ("I live in Berlin
# and work as a nurse"): where one follows, the object before it has ended
CLAUSE_VERBS = (
    r"work|worked|live|lived|love|loved|like|liked|enjoy|prefer|have|had|am|was|moved|relocated"
    r"|started|began|left|quit|teach|taught|run|ran|use|used|got|opened|bought|went|switched"
    r"|changed|stopped|joined|became|eat|drink|play|study|studied|own|founded|retired|married"
    r"|split|broke|adopted|migrated|turned|now|also|still|currently|recently|just|then"
)
# where an object ends: a clause break, a reason, a time, a role ("at Google as an engineer")
STOP = re.compile(
    r"\s+(?:because|since|but|though|although|while|whenever|when|if|unless|so that|which|who"
    r"|and then|and (?=(?:i|i'm|i've|i'll|my|we|it|so)\b)|and (?=(?:" + CLAUSE_VERBS + r")\b)"
    r"|so (?=(?:i|i'm|we|we're)\b)|as (?=an?|the|my)"
    r"|for (?=the|this|that|our|my|now|it|a new|all|every|work)"
    r"|after (?=\d|my|the|a|an|years|months)"
    r"|(?:last|this|next) (?=week|month|year|weekend|spring|summer|autumn|fall|winter|\w+day)"
    r"|in (?=(?:the\s+)?(?:spring|summer|autumn|fall|winter|january|february|march|april|may"
    r"|june|july|august|september|october|november|december|\d{4})\b)"
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
    r"|from now on)\b|现在|如今|不再|改成|换成|改为|改喝|改用|以后|其实"
    r"|已经不|换了|不.{0,8}了(?=$|[，,。！!])",
    re.I,
)
QUESTION = re.compile(
    r"[?？]\s*$|^(?:what|which|who|whom|whose|where|when|why|how)(?:'s|'re|\s+(?:do|does|did|is"
    r"|are|am|was|were|can|could|would|will|should|have|has|much|many|old|long|often)\b)"
    r"|^(?:do|does|did|is|are|am|was|were|can|could|would|will|should|shall|have|has)\s+(?:i|you"
    r"|we|my|your|he|she|they|it|there)\b|[吗呢么嘛][。！!]?\s*$|什么(?![都也])|哪(?![儿里]?[都也])"
    r"|谁(?![都也])|怎么|为什么|多少|几(?:岁|个|点|号)",
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
# words before a fact that announce it and are not part of it ("Big news: I moved to …",
# "Remember that …", "记住：…"); taken off a sentence before it is read
# a request to the assistant after the fact, in the same sentence ("I use pnpm now, please use
# it in this repo", "我换成pnpm了，帮我改一下配置"): the fact ends before it
TRAILING_REQUEST = re.compile(
    r"\s*[,;，；]\s*(?:so\s+|and\s+)?(?:please|pls|plz|can\s+you|could\s+you|would\s+you|"
    r"kindly|make\s+sure\s+to|remember\s+to|请|帮我|麻烦|能不能|可以帮).*$"
    r"|\s+(?:btw|lol|lmao|haha|fyi)[.!]*$",
    re.IGNORECASE,
)
# quote marks a host wraps a message in ('"My dog is called Pixel."'), and the like
WRAPPING_QUOTES = "\"'“”‘’「」『』`"
LEAD_IN = re.compile(
    r"^(?:(?:(?:small|quick|big|little|minor|huge|some|good|great|exciting|sad|a bit of)\s+)?"
    r"(?:update|news|change|heads[- ]up|fyi|note|reminder|announcement)\s*[:!,.\-–—]+"
    r"|(?:just\s+)?(?:so\s+you\s+know|for\s+the\s+record|fun\s+fact|for\s+context|fyi|btw"
    r"|by\s+the\s+way|oh\s+and|also|anyway|guess\s+what|actually|well|ok(?:ay)?\s+so|so|and)"
    r"\s*[,:!.]?(?=\s)"
    r"|(?:please\s+)?(?:remember|note|keep\s+in\s+mind|don't\s+forget|do\s+not\s+forget"
    r"|make\s+a\s+note|take\s+note)(?:\s+that)?\s*[:,]?(?=\s)"
    r"|(?:just\s+)?an?\s+(?:quick\s+|friendly\s+)?reminder\s*[,:!.\-–—]"
    r"|(?:like|as)\s+I\s+(?:said|mentioned|told\s+you)(?:\s+before)?\s*,?"
    r"|(?:请)?(?:记住|记一下|记得|提醒一下|提醒你|跟你说个?(?:消息|事|好消息)?|告诉你(?:个好?消息)?"
    r"|对了|顺便说一下|顺便说一句|说一下|我说过|之前说过|我之前说过|更新一下|小更新|好消息|大新闻"
    r"|补充一下|另外)[：:，,！!。]?)\s*",
    re.I,
)
# an object that points at the conversation, not at the world ("I like the idea of a
# picnic" approves a suggestion; the value is checked after "the" is stripped)
BAD_VALUE = re.compile(
    r"^(?:it|this|that|these|those|them|him|her|one|so|what|how|when|where|why|which|who|if"
    r"|whether|(?:the\s+)?(?:way|idea|ideas|suggestions?|tips?|advice|recommendations?)"
    r"|talking|chatting|it's|that's|there|here)\b|\byou\b|\byour"
    r"|^(?:它|这|那|什么(?!都)|怎么|的)|你|您",
    re.I,
)
# a connective left dangling when a sentence is cut between two facts
JOINER = re.compile(r"[\s,，;；]*(?:\b(?:and|but|so)|而且|并且|但是?|也)?[\s,，;；]*$", re.I)
# "I'm going to bed" or "to the store" is not a plan; "to the Alps next week" is
TRIVIAL_PLAN = re.compile(
    r"^(?:bed|sleep|ask|say|try|be|go|leave|check|think|need|have|see)\b"
    r"|^(?:the|a|an)\s(?!.*\b(?:tomorrow|tonight|next|this|on \w+day)\b)",
    re.I,
)
# "I'm Priya" names the user; "I'm Italian" or "I'm Fine" does not
NOT_A_NAME = words(
    "american british english french german italian spanish chinese japanese korean indian "
    "canadian australian mexican brazilian russian irish scottish welsh dutch swedish norwegian "
    "danish finnish polish greek turkish portuguese swiss austrian belgian jewish muslim "
    "christian catholic buddhist hindu asian european african latino latina vegan vegetarian "
    "fine good great okay ok sorry back done ready here home new sure happy tired busy so not "
    "just also still really very glad excited sad single married engaged retired"
)


@dataclass(frozen=True)
class Rule:
    """A pattern; groups ``obj`` (required), ``neg``, ``excl``, ``topic``, ``pet``, ``elided``,
    ``other`` (the value it replaces) and ``org`` (an employer named beside a job)."""

    pattern: re.Pattern[str]
    slot: str | None  # fixed slot; None: derived from the value (see rule_match.slot_for)
    change: bool  # the wording itself says the value is new ("I moved to")
    exclusive: bool  # one value at a time ("prefer", "favourite", "switched to")
    ends: bool = False  # the wording says the value is over ("I left teaching", "分手了")


MACROS = {
    "<OBJ>": r"(?P<obj>[^,;:，；：]+)",
    # the user as subject, or (after "and") the user's subject left out: "I live in Berlin
    # and work as a nurse"; the empty ``elided`` group says so, and the match then needs
    # "I" or "we" earlier in the sentence
    "<I>": r"(?:\bI\s+|(?<=\band\s)(?P<elided>))",
    "<SUBJ>": r"(?:\b(?:I|we)(?:'ve|’ve| have)?\s+|(?<=\band\s)(?P<elided>))",
    "<IM>": r"(?:\bI(?:'m|’m| am)\s+|(?<=\band\s)(?P<elided>)am\s+)",
    # a Chinese clause may drop its subject after a comma ("我叫张三，今年30岁")
    "<WO>": r"(?:我(?!们)|(?<=[，,])(?P<elided>))",
    "<WE>": r"(?:我们?|(?<=[，,])(?P<elided>))",
    # when, between a Chinese subject and its verb ("我们今年春天搬去了重庆")
    "<CNWHEN>": r"(?:今年|去年|前年|上个?月|上周|上星期|这个?月|最近|刚刚?|已经|终于|前几天"
    r"|前段时间|年初|年底|春天|夏天|秋天|冬天|\d{1,4}[年月]|[一二三四五六七八九十]+月|也|都|还)*",
    "<JOBS>": r"engineer|developer|programmer|designer|teacher|professor|doctor|nurse|student"
    r"|lawyer|manager|scientist|researcher|writer|artist|accountant|consultant|analyst|architect"
    r"|chef|journalist|photographer|musician|pharmacist|dentist|farmer|pilot|driver|founder"
    r"|planner|baker|barista|freelancer|translator|electrician|plumber|mechanic|cook|waiter"
    r"|waitress|cashier|clerk|editor|therapist|psychologist|paramedic|firefighter|officer"
    r"|librarian|veterinarian|vet|surgeon|intern|director|ceo|cto|owner|entrepreneur|tutor"
    r"|coach|trainer|carpenter|tester|administrator|admin|specialist|technician|assistant",
    "<CNJOBS>": r"师|员|生|家|者|经理|警察|老板|司机|护士|会计|医生|老师|教师|律师|厨师|记者"
    r"|店主|主管|总监|创始人|模特|演员|歌手|作家|画家|翻译",
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
    "<PARTNER>": r"partner|wife|husband|girlfriend|boyfriend|fianc[eé]e?|spouse",
    "<CNPARTNER>": r"男朋友|女朋友|对象|老公|老婆|丈夫|妻子|伴侣|未婚夫|未婚妻",
    "<NAME>": r"(?-i:[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)",
}


def rules(table: str) -> list[Rule]:
    """A family from a table, a rule a line: ``slot flags | regex``.

    ``-`` is no fixed slot; flags: ``c`` the wording says the value changed,
    ``x`` the slot holds one value at a time, ``e`` the value is over.
    ``<OBJ>`` and the other :data:`MACROS` spell the shared pieces once.
    """
    out: list[Rule] = []
    for line in table.strip().splitlines():
        head, _, pattern = line.partition(" | ")
        slot, _, flags = head.strip().partition(" ")
        for name, text in MACROS.items():
            pattern = pattern.replace(name, text)
        compiled = re.compile(pattern.strip(), re.I)
        out.append(
            Rule(compiled, None if slot == "-" else slot, "c" in flags, "x" in flags, "e" in flags)
        )
    return out
