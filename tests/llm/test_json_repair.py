"""JSON extraction and repair over the answers local models actually give."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from memoryd.llm.json_repair import extract_json, strip_thinking
from memoryd.llm.lenient_json import parse_lenient

FACTS = {"facts": [{"text": "likes tea", "category": "preference"}, {"text": "lives in Oslo"}]}
FACTS_JSON = json.dumps(FACTS)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (FACTS_JSON, FACTS),
        ("  \n" + FACTS_JSON + "\n\n", FACTS),
        ("[1, 2, 3]", [1, 2, 3]),
        ("{}", {}),
        ("[]", []),
        ('{"a": "line\nbreak"}', {"a": "line\nbreak"}),  # a raw control character
        ('{"a": "caf\\u00e9 \\ud83d\\ude00"}', {"a": "café 😀"}),
        ('{"nested": {"deep": [[], {}]}}', {"nested": {"deep": [[], {}]}}),
    ],
)
def test_clean_json_comes_through(text: str, expected: Any) -> None:
    assert extract_json(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        f"Here is the JSON you asked for:\n{FACTS_JSON}",
        f"{FACTS_JSON}\n\nLet me know if you need anything else!",
        f"Sure! {FACTS_JSON} Hope this helps.",
        f"```json\n{FACTS_JSON}\n```",
        f"```\n{FACTS_JSON}\n```",
        f"```JSON\n{json.dumps(FACTS, indent=2)}\n```",
        f"Here you go:\n```json\n{FACTS_JSON}\n```\nThe facts are above.",
        f"<think>The user likes tea, so {{maybe}} a fact.</think>\n{FACTS_JSON}",
        f"<think>\nfirst\n</think><think>second</think>```json\n{FACTS_JSON}\n```",
        f"<THINK>shouting</THINK>{FACTS_JSON}",
        f"reasoning without an opening tag</think>\n{FACTS_JSON}",
        f"See note [1] below: {FACTS_JSON}",  # the longest value wins over a bracket in prose
        f"Facts (as [requested]): {FACTS_JSON}",
        json.dumps(FACTS_JSON),  # JSON sent as a JSON string
    ],
)
def test_json_is_found_in_prose_fences_and_reasoning(text: str) -> None:
    assert extract_json(text) == FACTS


def test_the_first_fence_holding_json_is_taken() -> None:
    text = "```text\nno json here\n``` and then:\n```json\n" + FACTS_JSON + "\n```"
    assert extract_json(text) == FACTS


def test_a_fragment_of_a_broken_answer_does_not_pass_for_the_answer() -> None:
    with pytest.raises(ValueError, match="malformed"):
        extract_json('{"facts": [{"text": "a"}], "note": unquoted words}')


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1, "b": [1, 2,],}', {"a": 1, "b": [1, 2]}),
        ('{"a": 1,, "b": 2}', {"a": 1, "b": 2}),
        (
            "{'a': 'single', 'b': True, 'c': None, 'd': False}",
            {"a": "single", "b": True, "c": None, "d": False},
        ),
        ("{'text': 'I don't like mornings'}", {"text": "I don't like mornings"}),
        ("{'text': \"it's fine\"}", {"text": "it's fine"}),
        ('{"text": "she said "hi" to me"}', {"text": 'she said "hi" to me'}),
        ('{text: "unquoted key", n: 2}', {"text": "unquoted key", "n": 2}),
        ('{"a": 1 // a comment\n, "b": /* inline */ 2}', {"a": 1, "b": 2}),
        ('[{"a": 1} {"a": 2}]', [{"a": 1}, {"a": 2}]),
        ('{"a": [1] "b": 2}', None),  # a missing comma before a key is not guessed
        ('{"x": 1.5e3, "y": -2, "z": 0.25}', {"x": 1500.0, "y": -2, "z": 0.25}),
        ('{"p": "a\\\'b", "q": "c\\qd"}', {"p": "a'b", "q": "c\\qd"}),
        ("Result: {'ok': True,} -- done", {"ok": True}),
    ],
)
def test_common_breakage_is_mended(text: str, expected: Any) -> None:
    if expected is None:
        with pytest.raises(ValueError, match="malformed"):
            extract_json(text)
    else:
        assert extract_json(text) == expected


def test_python_and_javascript_number_literals() -> None:
    value = extract_json("{'a': NaN, 'b': Infinity, 'c': -Infinity,}")
    assert math.isnan(value["a"]) and value["b"] == math.inf and value["c"] == -math.inf


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a cut-off list of facts keeps its complete items; the half item goes
        (
            '{"facts": [{"text": "a"}, {"text": "b"}, {"text": "c',
            {"facts": [{"text": "a"}, {"text": "b"}]},
        ),
        ('{"facts": [{"text": "a"}, {"text": "b", "cat', {"facts": [{"text": "a"}]}),
        ('{"facts": [{"text": "a"}, {"text": "b"}', {"facts": [{"text": "a"}, {"text": "b"}]}),
        ('{"facts": [{"text": "a"},', {"facts": [{"text": "a"}]}),
        ('{"facts": [', {"facts": []}),
        ('{"facts":', {}),
        ('{"fac', {}),
        ('{"summary": "done", "count": 12', {"summary": "done"}),  # 12 may have been 1234
        ('{"summary": "done", "count": 12, "mo', {"summary": "done", "count": 12}),
        ('{"ok": tru', {}),
        ('{"ok": true', {"ok": True}),
        ('["a", "b", "c', ["a", "b"]),
        ('{"a": {"b": 1, "c": "x', {"a": {"b": 1}}),  # a cut object member keeps what closed
        ('{"a": "x\\', {}),  # cut inside an escape
        ("```json\n" + '{"facts": [{"text": "a"}, {"te', {"facts": [{"text": "a"}]}),
        ("<think>ok</think>\n" + '[{"text": "a"}, {"text": "b', [{"text": "a"}]),
    ],
)
def test_truncated_json_is_closed_and_the_partial_value_dropped(text: str, expected: Any) -> None:
    assert extract_json(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("   \n ", "empty"),
        ("I'm sorry, but I can't help with that.", "no JSON object or array"),
        ("As an AI language model, I cannot extract personal facts.", "no JSON object or array"),
        ("<think>I should refuse this, or maybe output {", "only reasoning"),
        ("<think>all thought, no answer</think>", "only reasoning"),
        ("42", "no JSON object or array"),
        ('"just a string"', "no JSON object or array"),
        ("{ this is not json at all }", "malformed"),
        ('{"a": }', "malformed"),
        ('{"a": 1 2}', "malformed"),
        ('"cut off string', "no JSON object or array"),
    ],
)
def test_nothing_usable_is_a_value_error_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        extract_json(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>a</think>answer", "answer"),
        ("<think>a</think>one<think>b</think>two", "onetwo"),
        ("thinking</think>answer", "answer"),
        ("answer<think>never closed", "answer"),
        ("no reasoning here", "no reasoning here"),
    ],
)
def test_strip_thinking(text: str, expected: str) -> None:
    assert strip_thinking(text) == expected


def test_parse_lenient_reports_where_the_value_ends() -> None:
    text = "xx {'a': 1} trailing"
    value, end = parse_lenient(text, 3)
    assert value == {"a": 1}
    assert text[end:] == " trailing"


def test_brackets_in_prose_do_not_hide_the_answer() -> None:
    assert extract_json("[note] " * 10 + FACTS_JSON) == FACTS
    assert extract_json("I think {the answer} is: " + FACTS_JSON) == FACTS


def test_deep_nesting_is_refused_not_a_crash() -> None:
    with pytest.raises(ValueError, match="deeper than"):
        extract_json("[" * 10_000)
    with pytest.raises(ValueError, match="deeper than"):
        extract_json("[" * 10_000 + "]" * 10_000)


def test_a_large_answer_is_read_whole() -> None:
    facts = {"facts": [{"text": f"fact {i}", "importance": i / 1000} for i in range(2000)]}
    text = json.dumps(facts)
    assert extract_json("Here:\n" + text[:-1] + ",}") == facts  # lenient path too
