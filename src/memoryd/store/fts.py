"""Turning a free-text query into FTS5 MATCH expressions.

Words go to the stemmed unicode61 index as an OR of quoted terms (quoting
keeps user punctuation from being read as FTS syntax). Chinese and Japanese
have no spaces, so a CJK run is cut into overlapping trigrams for the
trigram index and into overlapping bigrams for the bigram index: most
Chinese words are two characters long (猫叫什么 must find 我的猫叫小白 by
猫叫), and a trigram index cannot hold them. A lone CJK character is
returned for a substring scan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Function words that carry no topic: an OR query over them only adds noise.
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "user",
        "users",
        "s",
        "t",
        "don",
        "didn",
        "doesn",
        "isn",
        "wasn",
        "ll",
        "ve",
        "re",
        "d",
        "m",
    ]
)

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
CJK_RUN = re.compile(f"[{_CJK}]+")
TRIGRAM = 3
BIGRAM = 2
# a word held by more rows than this is a common term (Elasticsearch's "common terms"
# query): FTS5 scores every row an OR query matches, so a common word makes the keyword
# leg O(its rows) (about 11 ms for three words in 5 % of 100k rows each, against 1 ms when
# they must co-occur), while its IDF is too small to decide much. Candidates then come
# from the rare words, or from rows that hold the common words together, and only when
# those are fewer than asked for from the plain OR too; each query ranks at most this many
# of the newest rows it matches. Below this many rows every query is the plain OR: small
# stores (and the benchmarks' conversations) rank as they always did. The PostgreSQL
# store ranks its keyword matches within the newest this many too.
COMMON_TERM_ROWS = 2_000


@dataclass
class FtsQuery:
    words: str | None = None  # MATCH text for the unicode61 index
    trigrams: str | None = None  # MATCH text for the trigram index
    bigrams: str | None = None  # MATCH text for the CJK bigram index
    substrings: list[str] = field(default_factory=list)  # short CJK runs, for LIKE
    terms: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.words or self.trigrams or self.bigrams or self.substrings)


def quote_term(term: str) -> str:
    """``term`` as one FTS5 phrase (user punctuation is never read as query syntax)."""
    return '"' + term.replace('"', '""') + '"'


def has_cjk(text: str) -> bool:
    return CJK_RUN.search(text) is not None


def word_terms(text: str) -> list[str]:
    """Lower-cased non-CJK words of ``text`` that are not stop words, in order, unique."""
    latin = CJK_RUN.sub(" ", text.lower())
    seen: dict[str, None] = {}
    for word in re.findall(r"\w+", latin):
        if word in STOPWORDS or (word.isdigit() and len(word) < 2):
            continue
        seen.setdefault(word, None)
    return list(seen)


def cjk_bigrams(text: str | None) -> str:
    """The CJK bigrams of ``text``, space-separated, for the bigram index.

    SQLite's tokenizers read a CJK run as one token, so the grams are cut
    here (registered as the SQL function ``cjk_bigrams`` that the index's
    triggers call) and the index tokenizes them on the spaces. A run of one
    character is kept whole so that it can still be matched as a word.
    """
    if not text:
        return ""
    grams: list[str] = []
    for run in CJK_RUN.findall(text):
        if len(run) < BIGRAM:
            grams.append(run)
        grams.extend(run[i : i + BIGRAM] for i in range(len(run) - BIGRAM + 1))
    return " ".join(grams)


def build_query(text: str) -> FtsQuery:
    terms = word_terms(text)
    query = FtsQuery(terms=terms)
    if terms:
        query.words = " OR ".join(quote_term(t) for t in terms)
    runs = CJK_RUN.findall(text)
    if runs:
        grams: dict[str, None] = {}
        pairs: dict[str, None] = {}
        for run in runs:
            if len(run) < TRIGRAM:
                query.substrings.append(run)
            for i in range(len(run) - TRIGRAM + 1):
                grams.setdefault(run[i : i + TRIGRAM], None)
            pairs.update({p: None for p in cjk_bigrams(run).split() if len(p) == BIGRAM})
        grams.update({t: None for t in terms if len(t) >= TRIGRAM})
        if grams:
            query.trigrams = " OR ".join(quote_term(g) for g in grams)
        if pairs:
            query.bigrams = " OR ".join(quote_term(p) for p in pairs)
    return query
