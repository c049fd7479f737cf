"""A JSON reader that mends what local models break instead of failing.

Used by :mod:`memoryd.llm.json_repair` once strict parsing has failed. It
accepts trailing and doubled commas, single quotes, unescaped inner quotes,
unquoted keys, comments, Python and JavaScript literals, and a missing comma
between containers. When the text ends inside the value (the model hit its
token limit) it closes what is open and drops what was being written: half a
string or a cut-off number would be silently wrong, and an unfinished element
of a list (half a fact) is worth less than the complete ones before it.
"""

from __future__ import annotations

import re
from typing import Any

NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
# JSON, JavaScript and Python spellings of the literals.
LITERALS: dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
    "NaN": float("nan"),
    "Infinity": float("inf"),
}
ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
# What may follow a closing quote; any other character means the quote was an
# apostrophe (or an unescaped inner quote) and the string goes on.
AFTER_STRING = frozenset(",:}]")
WHITESPACE = " \t\r\n"
# Deeper nesting than any answer memoryd asks for; the limit keeps a run of
# brackets in prose from exhausting the interpreter's stack.
MAX_DEPTH = 64


class _Incomplete:
    """Stands for a scalar the answer stopped in the middle of."""


INCOMPLETE = _Incomplete()


class MalformedJSON(ValueError):
    """Not JSON even after mending, at ``pos``."""

    def __init__(self, pos: int, reason: str) -> None:
        super().__init__(f"{reason} at character {pos}")
        self.pos = pos


def parse_lenient(text: str, start: int = 0) -> tuple[Any, int]:
    """Read one JSON value from ``text[start:]`` leniently; returns (value, end).

    An answer cut off inside the value is closed; what was being written when
    it stopped is dropped (see the module docstring).
    """
    parser = _Lenient(text)
    value, _ = parser.value(start)
    if value is INCOMPLETE:
        raise MalformedJSON(len(text), "the answer stops before its first value ends")
    return value, parser.pos


class _Lenient:
    """A recursive-descent JSON reader that mends instead of failing.

    Each reader returns ``(value, complete)``; ``complete`` is False when
    the text ran out inside the value.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def skip(self) -> None:
        """Whitespace and comments (``//`` and ``/* */``, which some models add)."""
        text = self.text
        while self.pos < len(text):
            if text[self.pos] in WHITESPACE:
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end + 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                self.pos = len(text) if end < 0 else end + 2
            else:
                return

    def value(self, pos: int) -> tuple[Any, bool]:
        self.pos = pos
        self.skip()
        if self.at_end():
            return INCOMPLETE, False
        ch = self.text[self.pos]
        if ch in "{[":
            if self.depth >= MAX_DEPTH:
                raise MalformedJSON(self.pos, f"nested deeper than {MAX_DEPTH} levels")
            self.depth += 1
            try:
                return self.object() if ch == "{" else self.array()
            finally:
                self.depth -= 1
        if ch in "\"'":
            return self.string()
        return self.scalar()

    def object(self) -> tuple[Any, bool]:
        result: dict[str, Any] = {}
        self.pos += 1
        while True:
            self.skip()
            if self.at_end():
                return result, False
            ch = self.text[self.pos]
            if ch == "}":
                self.pos += 1
                return result, True
            if ch == ",":  # also mends trailing and doubled commas
                self.pos += 1
                continue
            key, complete = self.key()
            self.skip()
            if not complete or self.at_end():
                return result, False  # a dangling key is dropped
            if self.text[self.pos] != ":":
                raise MalformedJSON(self.pos, f"expected ':' after the key {key!r}")
            value, complete = self.value(self.pos + 1)
            if not complete:
                # a closed-off container keeps its complete members; a cut scalar goes
                if isinstance(value, dict | list):
                    result[key] = value
                return result, False
            result[key] = value
            self.after_member("}")

    def array(self) -> tuple[Any, bool]:
        result: list[Any] = []
        self.pos += 1
        while True:
            self.skip()
            if self.at_end():
                return result, False
            ch = self.text[self.pos]
            if ch == "]":
                self.pos += 1
                return result, True
            if ch == ",":
                self.pos += 1
                continue
            value, complete = self.value(self.pos)
            if not complete:
                return result, False  # an unfinished element is dropped whole
            result.append(value)
            self.after_member("]")

    def after_member(self, closer: str) -> None:
        """Accept a comma, the closer, the end, or a missing comma before a container."""
        self.skip()
        if self.at_end() or self.text[self.pos] in f",{closer}{{[":
            return
        raise MalformedJSON(self.pos, f"expected ',' or '{closer}'")

    def key(self) -> tuple[str, bool]:
        ch = self.text[self.pos]
        if ch in "\"'":
            key, complete = self.string()
            return (key if isinstance(key, str) else ""), complete
        match = IDENTIFIER.match(self.text, self.pos)  # an unquoted key, as in JavaScript
        if not match:
            raise MalformedJSON(self.pos, "expected a key")
        self.pos = match.end()
        return match.group(), not self.at_end()

    def string(self) -> tuple[Any, bool]:
        """A string in double or single quotes.

        A quote closes the string only when a delimiter (or the end) follows
        it; otherwise it is taken as part of the text: "don't" inside single
        quotes, or an unescaped quote inside double ones.
        """
        text = self.text
        quote = text[self.pos]
        pos = self.pos + 1
        out: list[str] = []
        while pos < len(text):
            ch = text[pos]
            if ch == "\\":
                if pos + 1 >= len(text):
                    break
                pos, piece = _escape(text, pos)
                out.append(piece)
                continue
            if ch == quote and _closes(text, pos + 1):
                self.pos = pos + 1
                return "".join(out), True
            out.append(ch)
            pos += 1
        self.pos = len(text)
        return INCOMPLETE, False

    def scalar(self) -> tuple[Any, bool]:
        text = self.text
        number = NUMBER.match(text, self.pos)
        if number:
            self.pos = number.end()
            if self.at_end():
                return INCOMPLETE, False  # "12" may have been "1234"
            literal = number.group()
            return (float(literal) if any(c in literal for c in ".eE") else int(literal)), True
        word = IDENTIFIER.match(text, self.pos)
        if word and word.group() in LITERALS:
            self.pos = word.end()
            return LITERALS[word.group()], True
        if word and word.end() == len(text) and any(k.startswith(word.group()) for k in LITERALS):
            self.pos = word.end()
            return INCOMPLETE, False  # "tru" at the end of a cut-off answer
        if text.startswith("-Infinity", self.pos):
            self.pos += len("-Infinity")
            return float("-inf"), True
        raise MalformedJSON(self.pos, f"unexpected {text[self.pos : self.pos + 12]!r}")


def _closes(text: str, pos: int) -> bool:
    """Whether a quote just before ``pos`` ends its string: a delimiter or the end follows."""
    while pos < len(text) and text[pos] in WHITESPACE:
        pos += 1
    return pos >= len(text) or text[pos] in AFTER_STRING


def _escape(text: str, pos: int) -> tuple[int, str]:
    """Decode the escape at ``text[pos]`` (a backslash); returns (next pos, text)."""
    code = text[pos + 1]
    if code in ESCAPES:
        return pos + 2, ESCAPES[code]
    if code == "u":
        digits = text[pos + 2 : pos + 6]
        if len(digits) == 4 and all(c in "0123456789abcdefABCDEF" for c in digits):
            point = int(digits, 16)
            low = text[pos + 8 : pos + 12]
            if 0xD800 <= point < 0xDC00 and text.startswith("\\u", pos + 6) and len(low) == 4:
                try:
                    second = int(low, 16)
                except ValueError:
                    second = 0
                if 0xDC00 <= second < 0xE000:
                    combined = 0x10000 + ((point - 0xD800) << 10) + (second - 0xDC00)
                    return pos + 12, chr(combined)
            return pos + 6, chr(point)
    if code == "'":
        return pos + 2, "'"
    return pos + 2, "\\" + code  # an unknown escape is kept as written
