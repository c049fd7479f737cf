"""The category of an imported section when no LLM files it: the nearest in meaning.

Without a model to read a note, a section used to be filed under ``entities``
whatever it held, so travel notes, a fix for a leaking tap and a release
checklist all read as knowledge about things. Each category is described by a
few sentences, in English and in Chinese, of what a note of that kind says;
a section goes to the category whose description its vector is closest to,
with the home's own embedder. It is meaning, not wording: no term of a note
has to appear in a description. ``python -m bench doc-categories`` measures it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from memoryd.models import Category

Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]

DESCRIPTIONS: dict[Category, tuple[str, ...]] = {
    Category.PROFILE: (
        "About me: my name, my age, where I live, my job, my family and education.",
        "Personal details: who I am, where I grew up, the languages I speak, my health.",
        "关于我：我的名字、年龄、住址、工作、家人和学历。",
    ),
    Category.PREFERENCES: (
        "What I like and dislike, what I prefer and would rather avoid.",
        "My favourite food, drinks, music, styles and the way I like things set up.",
        "我的喜好：喜欢什么、不喜欢什么、更偏爱哪一种。",
    ),
    Category.ENTITIES: (
        "What a thing is: a project, a tool, a product, a company, a place and its properties.",
        "Notes about a person I know, an organisation or a system and how it works.",
        "介绍一个项目、工具、产品、公司或某个人：它是什么，有什么特点。",
    ),
    Category.EVENTS: (
        "What happened on a day: a trip, a visit, a meeting, a party, an appointment.",
        "A diary entry or travel notes: where we went, what we did, and when.",
        "某一天发生的事：旅行、聚会、会议、预约，我们去了哪里、做了什么。",
    ),
    Category.CASES: (
        "A problem that came up and how it was solved: what broke and the fix.",
        "Troubleshooting: the error, the cause found, and what finally worked.",
        "遇到的问题和解决办法：哪里坏了，原因是什么，最后怎么修好的。",
    ),
    Category.PATTERNS: (
        "How to do something: the steps, a checklist, a recipe, a procedure.",
        "A routine or rule of thumb I follow every time.",
        "做某件事的步骤、清单、做法或每次都遵循的习惯和规则。",
    ),
}


class CategoryGuess:
    """Files a text under the category whose descriptions its vector is nearest to.

    The descriptions are embedded once, on first use, by the home's embedder,
    so a home on the multilingual model compares in that model's space.
    """

    def __init__(self, embed: Embed) -> None:
        self._embed = embed
        self._labels: list[Category] = []
        self._vectors: npt.NDArray[np.float32] | None = None

    def _descriptions(self) -> npt.NDArray[np.float32]:
        if self._vectors is None:
            texts = [t for texts in DESCRIPTIONS.values() for t in texts]
            self._labels = [c for c, texts in DESCRIPTIONS.items() for _ in texts]
            self._vectors = self._embed(texts)
        return self._vectors

    def __call__(self, text: str) -> Category:
        return self.many([text])[0]

    def many(self, texts: Sequence[str]) -> list[Category]:
        """One category per text; the nearest single description decides."""
        if not texts:
            return []
        descriptions = self._descriptions()
        scores = self._embed(list(texts)) @ descriptions.T
        return [self._labels[int(i)] for i in np.argmax(scores, axis=1)]
