"""Stage 4 of the slow path: facts that are chatter, not memory (seed 000 §1.1).

Three layers, cheapest first:

1. regex families for greetings, thanks, acknowledgements, meta-questions
   about the assistant and assistant refusals, in English and Chinese;
2. vector prototypes: a fact whose vector is within ``NOISE_THRESHOLD``
   cosine of a known piece of chatter ("thanks, that helps") is chatter too,
   however it is worded;
3. learned noise: vectors of memories a user marked as noise (at most
   ``MAX_LEARNED_NOISE``, the newest kept), matched like the prototypes.

Chinese and Japanese text skips the prototypes: the bundled embedding model
was trained on English, and there any two sentences sharing a few common
characters look alike to it.

The filter only reads; the store keeps the learned vectors.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from memoryd.text.rule_tables import NOISE as CHATTER_WORDS

NOISE_THRESHOLD = 0.82
# the roles that answer the user: their short exclamations react, they do not inform
ASSISTANT_ROLES = frozenset(("assistant", "ai", "bot", "model"))
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
MAX_LEARNED_NOISE = 200

_I = re.IGNORECASE
# whole-sentence patterns: a fact that *is* one of these says nothing durable
GREETINGS = re.compile(
    r"^\s*(hi|hello|hey|hiya|yo|good (morning|afternoon|evening|night)|bye|goodbye|see you"
    r"( later| soon)?|你好|您好|嗨|哈喽|早上好|早安|晚上好|晚安|再见|拜拜)[\s!.,，。！~]*$",
    _I,
)
THANKS = re.compile(
    r"^\s*((many |great )?thanks?( you)?( so much| a lot| very much)?( for (the|your) help)?|thx|ty"
    r"|cheers|appreciate it|谢谢(你|您)?(的帮助)?|多谢|感谢(你|您)?|辛苦了)[\s!.,，。！~]*$",
    _I,
)
ACKNOWLEDGEMENTS = re.compile(
    r"^\s*(ok(ay)?|k|sure|got it|cool|nice|great|alright|fine|yes|no|yep|nope|sounds good"
    r"|好的?|嗯+|行|可以|收到|明白了?|知道了|没问题|对)[\s!.,，。！~]*$",
    _I,
)
META_QUESTIONS = re.compile(
    r"^\s*(can you (help|hear)|are you (there|an? (ai|bot|robot))|who are you|what can you do"
    r"|what are you|你是谁|你能做什么|你会什么|你在吗|你是(机器人|人工智能|AI))",
    _I,
)
REFUSALS = re.compile(
    r"(i'?m sorry,? (but )?i (can(no|')t|am unable|won'?t)|as an ai( language model)?"
    r"|i (can(no|')t|am not able to) (help|assist|do that)"
    r"|抱歉，?我(无法|不能)|作为(一个)?(AI|人工智能))",
    _I,
)
# what an assistant says back that carries nothing to remember: a short exclamation
# ("Big change!", "杭州很美！") or a stock reaction ("Noted.", "Makes sense.", "明白了。")
REACTIONS = re.compile(
    r"^\s*(?:(?:[\w'’-]+[\s,]+){0,4}[\w'’-]+\s*[!！]+|(?:noted|got it|interesting|makes sense"
    r"|of course|right|indeed|absolutely|definitely|sounds (?:good|great|fun)|classic choice"
    r"|(?:great|good|nice) (?:taste|pick|choice|one|idea|news)|(?:i'?m )?(?:so )?sorry to hear that"
    r"|how (?:wonderful|exciting|nice|cool|fun)|congrat(?:ulation)?s|well deserved|good luck"
    r"|好的?|嗯+|行|收到|明白了?|了解|知道了|记住了|没问题|放心|对|不错|太好了|恭喜(?:恭喜)?|哈哈+"
    r"|抱抱你?|加油|辛苦了|很经典|很健康)[\s!.,，。！~]*"
    r"|[\u3400-\u9fff]{1,8}[！!]+)\s*$",
    _I,
)
FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("greeting", GREETINGS),
    ("thanks", THANKS),
    ("acknowledgement", ACKNOWLEDGEMENTS),
    ("meta_question", META_QUESTIONS),
    ("refusal", REFUSALS),
)
# chatter that the regexes word too narrowly; embedded once per process
PROTOTYPES = (
    "Thanks, that was really helpful!",
    "Hello, how are you doing today?",
    "Okay, sounds good to me.",
    "Can you help me with something?",
    "I'm sorry, but I can't help with that request.",
    "Let me know if you need anything else.",
    "Goodbye, talk to you later.",
    "谢谢你的帮助，非常有用！",
    "你好，今天过得怎么样？",
    "好的，没问题。",
)


def says_nothing(role: str, text: str) -> bool:
    """A conversation turn that carries no content: chatter by the regex families, or a
    reaction of the assistant's. Such a turn is kept like any other, but ranks last."""
    if regex_noise(text) is not None or CHATTER_WORDS.match(text):
        return True
    if role.strip().lower() not in ASSISTANT_ROLES:
        return False  # "I moved to Oslo!", "It's Shia Labeouf!": short, exclaimed, and news
    return not re.search(r"\d|[?？]", text) and bool(REACTIONS.match(text))


def regex_noise(text: str) -> str | None:
    """The family a text belongs to, or None when it is not chatter by its words."""
    for name, pattern in FAMILIES:
        if pattern.search(text):
            return name
    return None


def _unit_rows(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms == 0, 1.0, norms)).astype(np.float32)


@dataclass
class NoiseFilter:
    """Regexes, then prototypes, then learned noise; ``check`` says which layer caught a text."""

    prototypes: npt.NDArray[np.float32]
    learned: npt.NDArray[np.float32] = field(
        default_factory=lambda: np.zeros((0, 0), dtype=np.float32)
    )
    threshold: float = NOISE_THRESHOLD

    @classmethod
    def build(
        cls,
        embed: Callable[[Sequence[str]], npt.NDArray[np.float32]],
        learned: npt.NDArray[np.float32] | None = None,
    ) -> NoiseFilter:
        """Embed the prototypes (once per process is enough: see ``with_learned``)."""
        return cls.with_learned(_unit_rows(embed(list(PROTOTYPES))), learned)

    @classmethod
    def with_learned(
        cls, prototypes: npt.NDArray[np.float32], learned: npt.NDArray[np.float32] | None
    ) -> NoiseFilter:
        """Embedded prototypes and a space's learned noise, the newest ``MAX_LEARNED_NOISE``."""
        dim = prototypes.shape[1]
        recent = np.zeros((0, dim), dtype=np.float32) if learned is None else learned
        return cls(prototypes=prototypes, learned=_unit_rows(recent[-MAX_LEARNED_NOISE:]))

    def check(self, text: str, vector: npt.NDArray[np.float32] | None) -> str | None:
        """Why ``text`` is noise ("regex:thanks", "prototype", "learned"), or None."""
        family = regex_noise(text)
        if family is not None:
            return f"regex:{family}"
        if vector is None:
            return None
        unit = vector / (np.linalg.norm(vector) or 1.0)
        # the bundled model reads Chinese and Japanese as shared characters: "用户每天早上跑步"
        # is within 0.85 of "你好，今天过得怎么样？". Only what the user marked compares there.
        banks = (
            (("learned", self.learned),)
            if CJK.search(text)
            else (
                ("prototype", self.prototypes),
                ("learned", self.learned),
            )
        )
        for name, bank in banks:
            if bank.size and float(np.max(bank @ unit)) >= self.threshold:
                return name
        return None
