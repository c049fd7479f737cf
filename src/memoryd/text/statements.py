"""Whose statement, and whether it states what holds: readings of words alone, no model.

A user's message may state their own fact ("I live in Denver"), another
person's ("my sister Anna lives in Boston", "我老公在腾讯做后端"), a plan or
wish ("thinking about moving to Seattle", "打算明年换工作"), or ask
something ("any tips for Denver?"). Ingest reads these before a statement
may change the user's value (:mod:`memoryd.ingest.attributes`); search reads
the same to rank another person's fact and a plan below the user's own fact
when the question is about neither (:mod:`memoryd.retrieve.subject_match`).

Lists of words are the right tool here (kinship and relation nouns, plan
verbs); they were written from the tuning half of the life-story set and are
measured on its confirming half (``python -m bench truth``). Pure: no I/O.
"""

from __future__ import annotations

import re
import threading

import snowballstemmer

from memoryd.text.conversation import spoken
from memoryd.text.rule_tables import META, QUESTION

# another person as the subject: "my sister …", "my coworker Lina …", "我老公…", "我妈…"
_RELATION_EN = (
    r"(?:sister|brother|mom|mum|mother|dad|father|parents?|wife|husband|partner|spouse|"
    r"girlfriend|boyfriend|gf|bf|fianc[ée]e?|son|daughter|kids?|friend|buddy|pal|bestie|"
    r"best friend|roommate|flatmate|housemate|neighbou?r|coworker|co-worker|colleague|"
    r"boss|manager|cousin|uncle|aunt|grandma|grandpa|grandmother|grandfather|niece|nephew|"
    r"in-laws?|teammate|classmate|family|folks|relatives)"
)
_OTHER_EN = re.compile(
    r"^\W*(?:so|btw|oh|also|and|well|lol|fun fact:?|update:?)?\W*(?:my|the user's|user's) "
    rf"(?:\w+ )?{_RELATION_EN}\b",
    re.IGNORECASE,
)
_RELATION_ZH = (
    r"(?:老公|老婆|爱人|对象|男朋友|女朋友|男友|女友|妈妈|妈|爸爸|爸|父母|哥哥|哥|姐姐|姐|"
    r"弟弟|弟|妹妹|妹|儿子|女儿|孩子|朋友|闺蜜|兄弟|室友|同事|同学|老板|领导|邻居|表哥|表姐|"
    r"表妹|表弟|堂哥|堂姐|舅舅|姑姑|阿姨|叔叔|奶奶|爷爷|外婆|外公|家人|家里人|亲戚|爸妈)"
)
_OTHER_ZH = re.compile(rf"^\W*(?:我的?|我们家的?|我家|用户的?)?{_RELATION_ZH}")
# … unless the user is a subject too ("my wife and I moved", "我和老婆搬到")
_WITH_USER = re.compile(
    r"\b(?:and|with) (?:i|me|the user)\b|^\W*(?:we|i)\b|和我|跟我|与我|和用户|我们", re.IGNORECASE
)
# a plan, a wish or a doubt: what may happen is not what holds
_PLAN_EN = re.compile(
    r"\b(?:thinking (?:about|of)|considering|planning (?:to|on)|plan to|might|maybe|i may|we may|"
    r"perhaps|want to|wanna|would like to|i'?d like to|hoping to|hope to|"
    r"(?:day)?dream(?:s|ing)? (?:of|about)|"
    r"someday|one day|eventually|if i|debating|not sure (?:if|whether)|tempted to|"
    r"looking into|applying (?:to|for)|applications? (?:to|for)|going to apply|"
    r"interview(?:ing)? (?:at|with)|"
    r"next (?:year|month|spring|summer|fall|autumn|winter)|"
    # what the user would do ("I'd look at Amsterdam instead"), not what they had done or a
    # hedge ("I'd say I'm fluent")
    r"(?:i'd|we'd|i would|we would)(?!\s+(?:been|had|never|say|guess|think|imagine)\b))\b",
    re.IGNORECASE,
)
_PLAN_ZH = re.compile(
    r"打算|准备|计划|考虑|想要|想去|想换|想搬|想学|想买|想入|有点想|老想|可能会|也许|或许|"
    r"要不要|等.{0,8}再|明年|下个月|以后|将来|梦想|在纠结|犹豫|申请"
)
# a request to the assistant the rules' tables do not name ("any tips for Denver", "帮我查查")
_REQUEST = re.compile(
    r"^\W*(?:any|recommend|help|pls|please)\b|^\W*(?:帮我|请|能不能|可以|推荐)|"
    # a request after a word of transition ("anyway can u help me …", "so could you …")
    r"^\W*(?:anyway|so|also|btw|and|ok|okay)\W+(?:can|could|would|will) (?:you|u)\b|"
    # an instruction to the assistant ("Plan my ride to the office"): the verbs people open
    # one with, in the form no statement of theirs takes
    r"^\W*(?:plan|book|write|draft|give|suggest|explain|summari[sz]e|translate|fix|compare|"
    r"create|generate|schedule|send|review|update|check|draw|outline|rewrite|convert)\s+"
    r"(?:my|me|us|our|a|an|the|this|that|some)\b",
    re.IGNORECASE,
)


# a liking stands beside another ("I like tea", "I like coffee") unless the words say the
# value changed ("I like tea now", "改喝茶了"), as the slot rules read a preference
# a liking names what is liked; "love it", "like it here" only appraise a value said beside
# ("I live in Dublin and love it"), which stays a value
_LIKING = re.compile(
    r"\b(?:like|likes|love|loves|enjoy|enjoys|into)\b(?!\s+(?:it|this|that|them|here|there)\b)"
    r"|喜欢|爱",
    re.IGNORECASE,
)
_CHANGED = re.compile(
    r"\b(?:now|switched|anymore|no longer|quit|instead|moved|started|stopped|again|ditched|"
    r"these days|nowadays)\b|现在|改|换|不再|戒|开始|如今",
    re.IGNORECASE,
)


def is_other(words: str) -> bool:
    """Another person is the subject, and the user is not one beside them."""
    clause = re.split(r"[,.;!?，。；！？]", words, maxsplit=1)[0]
    return bool(_OTHER_EN.search(words) or _OTHER_ZH.search(words)) and not _WITH_USER.search(
        clause
    )


def _the_users(en: str, zh: str) -> re.Pattern[str]:
    """A statement opening with someone of the user's own, named by one of these words."""
    return re.compile(
        rf"^\W*(?:my|our|the user's) (?:\w+ )?(?:{en})\b|^\W*(?:我的?|我家的?|用户的?)(?:{zh})",
        re.IGNORECASE,
    )


# the user's partner or child as the subject ("my girlfriend …", "我女儿…"): a statement
# about them as such (their name, the relation, a birth) is the user's own fact
_PARTNER_SUBJECT = _the_users(
    r"girlfriend|boyfriend|gf|bf|wife|husband|partner|spouse|fianc[ée]e?",
    r"老公|老婆|爱人|对象|男朋友|女朋友|男友|女友",
)
_CHILD_SUBJECT = _the_users(
    r"son|daughter|kid|child|baby|boy|girl", r"儿子|女儿|孩子|宝宝|闺女|老大|老二"
)


def names_partner(words: str) -> bool:
    """The statement's subject is the user's partner."""
    return bool(_PARTNER_SUBJECT.search(words))


def names_child(words: str) -> bool:
    """The statement's subject is the user's child."""
    return bool(_CHILD_SUBJECT.search(words))


def is_plan(words: str) -> bool:
    """A plan, wish or doubt: what may happen, not what holds."""
    return bool(_PLAN_EN.search(words) or _PLAN_ZH.search(words))


# what held once and is told as such ("I used to live in Paris", "我以前在阿里"): history
_PAST = re.compile(
    r"\b(?:used to|formerly|back when|back in|previously|once lived|my (?:old|former|previous)|"
    r"grew up|was born|born and raised|raised in|"
    r"(?<!'ve )(?<!have )(?<!has )(?:lived|worked|studied)|"
    r"was (?:living|working|based|studying))\b|"
    r"以前|之前|曾经|过去|原来|当年|长大|出生",
    re.IGNORECASE,
)


def is_past(words: str) -> bool:
    return bool(_PAST.search(words))


# a value that is over, with no new one said ("I stopped drinking coffee", "车卖了"): the
# rules' slot values say which memory held it; by attribute alone it would end them all
_ENDING = re.compile(
    r"\b(?:stopped|quit|quitting|left|no longer|anymore|gave up|sold|dropped|cancel+ed|retired|"
    r"passed away|died|broke up)\b|不再|戒|卖了|退了|辞了|分手|走了|没了",
    re.IGNORECASE,
)
_NEW_VALUE = re.compile(
    r"\b(?:now|switched|instead|started|joined|moved|got|bought|picked up|replaced|for|"
    r"back to|again)\b|现在|改|换|开始|入职|去了|买了|提了|成了|回到|又回|重新",
    re.IGNORECASE,
)
# the subject of an English statement that is neither the user nor left out ("The meeting
# moved to Thursday", "It is sunny"): not a statement of the user's own value
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|ive|i'd|me|my|we|we're|our|us|user|user's)\b", re.I)
# people no one names: another subject than the user ("someone parked in my spot")
_INDEFINITE = r"someone|somebody|everyone|everybody|nobody|no one|people"
_NAMED_SUBJECT = re.compile(
    rf"^\W*(?:the|a|an|this|that|these|those|it|its|it's|they|he|she|his|her|their|"
    rf"{_INDEFINITE})\b",
    re.I,
)


# a value denied ("I don't eat pork", "我不吃辣"): a restriction beside the others, not a
# new value of the attribute
_NEGATION = re.compile(
    r"\b(?:don't|dont|do not|doesn't|not|never|no|can't|cannot|won't)\b|"
    r"(?:从)?不(?:吃|喝|抽|碰|用|开|住)|没(?:有)?再",
    re.IGNORECASE,
)


# a return from a place: where the user was, not where they are ("just got back from Kyoto")
_BACK_FROM = re.compile(r"\b(?:back|home|returned|flew in|came in) from\b", re.IGNORECASE)


def comes_back_from(words: str) -> bool:
    """The words tell of coming back from somewhere: a trip, not a change of place."""
    return bool(_BACK_FROM.search(words))


def says_changed(words: str) -> bool:
    """The words say a change happened or holds now ("moved", "now", "switched", "换")."""
    return bool(_CHANGED.search(words) or _NEW_VALUE.search(words))


def is_ending_only(words: str) -> bool:
    """A value said to be over, or denied, and no new value said beside it."""
    return bool(_ENDING.search(words) or _NEGATION.search(words)) and not _NEW_VALUE.search(words)


_NAMED_SUBJECT_ZH = re.compile(r"^\W*(?:他|她|它)")
_FIRST_PERSON_ZH = re.compile(r"我|用户")


def in_first_person(words: str) -> bool:
    """The user is named (I, my, we, the user), wherever in the words."""
    return bool(_FIRST_PERSON.search(words) or _FIRST_PERSON_ZH.search(words))


def _names_a_subject(words: str) -> bool:
    return bool(_NAMED_SUBJECT.search(words) or _NAMED_SUBJECT_ZH.search(words))


# another person as what a statement opens with: a pronoun or an indefinite one (not an
# article, which opens the user's own things as often, "the new place has a balcony",
# nor "this" or "it", which often stand for the user's situation, "this is home now")
_OPENS_WITH_OTHER = re.compile(rf"^\W*(?:he|she|they|{_INDEFINITE})\b", re.IGNORECASE)
# the user as what a statement opens with ("I …", "my …", "the user …")
_OPENS_WITH_USER = re.compile(
    r"^\W*(?:i|i'm|im|i've|ive|i'd|my|we|we're|our|the user|the user's)\b", re.IGNORECASE
)


# a thing as what a statement opens with ("the Corolla …", "this place …"), not a person
_OPENS_WITH_A_THING = re.compile(r"^\W*(?:the|this|that|these|those)\b", re.IGNORECASE)


def opens_with_a_thing(words: str) -> bool:
    """The statement's subject is a thing named with an article or a demonstrative."""
    return bool(_OPENS_WITH_A_THING.search(words))


def is_about_user(words: str) -> bool:
    """The user is the statement's subject, or no subject is said (casual, or Chinese).

    A statement that opens with another person is theirs, whatever it says of the user
    after ("someone parked a Tesla in my spot"), unless the user is a subject beside
    them ("she and I moved")."""
    if _OPENS_WITH_OTHER.search(words) and not _OPENS_WITH_USER.search(words):
        return bool(_WITH_USER.search(words))
    return in_first_person(words) or not _names_a_subject(words)


def has_subject(words: str) -> bool:
    """The statement says whose it is: the user's, or someone's named."""
    return in_first_person(words) or _names_a_subject(words)


# a distilled fact speaks of "the user"; the attributes' examples, as people do, of "I"
_THIRD_PERSON = (
    (re.compile(r"\bthe user's\b", re.IGNORECASE), "my"),
    (re.compile(r"\bthe user is\b", re.IGNORECASE), "I am"),
    (re.compile(r"\bthe user has\b", re.IGNORECASE), "I have"),
    (re.compile(r"\bthe user was\b", re.IGNORECASE), "I was"),
    (re.compile(r"\bthe user\b", re.IGNORECASE), "I"),
)


def first_person(words: str) -> str:
    """A statement about "the user" as the user would say it."""
    for pattern, said in _THIRD_PERSON:
        words = pattern.sub(said, words)
    return words


def is_question(words: str) -> bool:
    """A question or a request: it asks, it states nothing (the rules' own tables, and the
    requests they leave to the noise filter)."""
    text = words.strip()
    return bool(QUESTION.search(text) or META.search(text) or _REQUEST.search(text))


def is_liking(words: str) -> bool:
    """A liking that does not say it changed: it stands beside the user's other likings."""
    return bool(_LIKING.search(words)) and not _CHANGED.search(words)


# a question about plans, or naming another person, asks for what these statements hold
_ASKS_PLAN = re.compile(
    r"\b(?:plan\w*|thinking|consider\w*|want\w*|wish\w*|hop(?:e|es|ing)|goals?|future|"
    r"intend\w*|dream\w*|next)\b|打算|计划|想|准备|目标|将来|以后|考虑|梦想",
    re.IGNORECASE,
)
_NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")
_RELATION = re.compile(rf"\b{_RELATION_EN}\b|{_RELATION_ZH}", re.IGNORECASE)


def asks_about_plans(query: str) -> bool:
    return bool(_ASKS_PLAN.search(query))


_ASKS_PAST = re.compile(
    r"\b(?:before|previous\w*|earlier|former\w*|originally|first|used to|past|once|ago|"
    r"did|was|were|history|change[ds]?|when|ever|been|lived|worked|studied|grew)\b|以前|之前|原来|曾经|过去|当初|第一|什么时候",
    re.IGNORECASE,
)


def asks_about_past(query: str) -> bool:
    """The question asks what held before, or when something changed."""
    return bool(_ASKS_PAST.search(query))


def names_the_other(query: str, statement: str) -> bool:
    """The query asks about someone other than the user: it names a relation (in either
    language: "son" in the statement, 儿子 in the question) or a name the statement holds."""
    if _RELATION.search(query):
        return True
    folded = query.casefold()
    names = {n.casefold() for n in _NAME.findall(spoken(statement))} - {"the", "my"}
    return any(n in folded for n in names)


# the words that say which value a statement holds: what is left of it without function
# words, words of the attributes themselves ("live", "drive", "work") and small talk
_STOP_WORDS = " ".join(
    (
        "a an the and or but so of to in on at for from with by as is are was were be been",
        "am i i'm im i've ive me my mine we we're our us you your he she they them his her",
        "their it its this that these those there here now just really very also still",
        "again then than too not no never all any some one two new old last first next",
        "year month week day days today yesterday ago since about into over after before",
        "while when where what which who how why do does did done have has had having get",
        "got getting go going went gone make made say said says lol btw ok okay yeah yes",
        "haha user user's users live lives living lived move moved moving relocated based",
        "home house apartment city town work works working worked job company team role",
        "position office joined hired quit left start started switched switch drive drives",
        "driving drove car use uses using used drink drinks drinking eat eats eating diet",
        "phone editor like likes love loves prefer prefers favourite favorite every morning",
        "night weekend weekends time life well good great much many more most",
    )
).split()
# a Snowball stemmer keeps the word it works on in itself: one per thread, or two
# requests stemming at once corrupt each other's word (IndexError inside the stemmer)
_STEMMERS = threading.local()


def _stem(words: list[str]) -> list[str]:
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    stems: list[str] = stemmer.stemWords(words)
    return stems


# compared after stemming, as the statements' words are
_STOP_EN = frozenset(_stem(_STOP_WORDS)) | frozenset(_STOP_WORDS)
_STOP_ZH_WORDS = re.compile(
    r"现在|以前|之前|已经|最近|开始|上个月|这个月|下个月|今年|去年|明年|用户"
)
_STOP_ZH = frozenset(
    "我你他她它们的了在是有和与跟也都还就很太又再这那个一去来到用做住搬换改吧呢啊哈"
)
_EN_WORD = re.compile(r"[a-z][a-z0-9+#'-]{2,}")
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
# the old value is named as replaced ("switched from coffee", "no longer vegetarian", "不再")
_REPLACES_NAMED = re.compile(
    r"\b(?:from|instead of|no longer|not|don't|dont|anymore|stopped|quit|ditched|left|sold|"
    r"gave up|switched|replaced|over|traded|swapped)\b|不再|不|没|戒|卖了|辞|离开|换掉|从",
    re.IGNORECASE,
)


def _chinese_parts(folded: str) -> list[str]:
    """The runs of Chinese characters in ``folded`` text, cut at its function words."""
    return [
        part
        for run in _CJK_RUN.findall(_STOP_ZH_WORDS.sub(" ", folded))
        for part in "".join(c if c not in _STOP_ZH else " " for c in run).split()
    ]


def value_words(text: str) -> set[str]:
    """The words of a statement that name values: English words and Chinese character pairs
    that are neither function words nor words of the attributes themselves."""
    folded = spoken(text).casefold()
    words = set(_stem([w.strip("'") for w in _EN_WORD.findall(folded)])) - _STOP_EN
    for part in _chinese_parts(folded):
        words |= {part[i : i + 2] for i in range(len(part) - 1)}
    return words


# the farthest apart two characters of a name stand in its short form ("超级猩猩" → "超猩",
# "北京大学" → "北大"): Chinese shortens a name to some of its characters, in order
ABBREVIATION_SPAN = 3


def short_forms(text: str) -> set[str]:
    """The two-character short forms the Chinese names in ``text`` may be called by: each
    pair of characters of a run, in order, up to ``ABBREVIATION_SPAN`` apart."""
    return {
        part[i] + part[j]
        for part in _chinese_parts(spoken(text).casefold())
        for i in range(len(part))
        for j in range(i + 2, min(len(part), i + ABBREVIATION_SPAN + 1))
    }


def changes_value(new: str, old: str) -> bool:
    """``new`` gives another value than ``old`` (of the same attribute): it names less than
    half of ``old``'s value words, names them as replaced, or names a new one and says it changed. A
    statement naming the same value without saying it changed ("my coffee grinder" after "I
    drink coffee") repeats or adds to it.
    """
    words, before = value_words(new), value_words(old)
    if len(words & before) * 2 < len(before):  # names little of the old value: another one
        return True
    text = spoken(new)
    if _REPLACES_NAMED.search(text):
        return True
    # names something new beside what it shares, and says the value changed
    return bool(words - before) and bool(_CHANGED.search(text) or _NEW_VALUE.search(text))


def names_a_value_of(new: str, old: str) -> bool:
    """``new`` names one of ``old``'s values (a word or character pair of them in common,
    or a short form of one of its Chinese names)."""
    return bool(value_words(new) & (value_words(old) | short_forms(old)))
