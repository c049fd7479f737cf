"""Strategy detection, smart_split and the file formats, on their own (no store)."""

from __future__ import annotations

import json

import pytest
from samples import (
    CHAT,
    HANDBOOK_SECTIONS,
    PDF_LINES,
    PNG,
    chatgpt_export,
    claude_export,
    handbook,
    jsonl_chat,
    long_text,
    pdf,
)

from memoryd.errors import ValidationError
from memoryd.imports.formats import Format, decode
from memoryd.imports.split import (
    SMART_SPLIT_MAX_CHARS,
    SMART_SPLIT_OVERLAP,
    Strategy,
    detect_strategy,
    first_sentence,
    smart_split,
    split_sections,
)


# ---------------------------------------------------------------------- strategy
def test_auto_follows_the_seed_rules_in_order() -> None:
    conversation = "user: hi\nassistant: hello\nuser: I like tea\nassistant: noted"
    assert detect_strategy(conversation) is Strategy.ATOMIC
    assert detect_strategy(long_text()) is Strategy.ATOMIC  # > 80,000 characters
    assert detect_strategy(handbook()) is Strategy.SECTION  # headings and >= 500 words
    short_with_heading = "# Note\n\nBuy milk and call the plumber."
    assert detect_strategy(short_with_heading) is Strategy.DOCUMENT  # < 500 words
    many_words_no_heading = " ".join(["word"] * 800)
    assert detect_strategy(many_words_no_heading) is Strategy.DOCUMENT


def test_two_role_lines_are_not_a_conversation() -> None:
    assert detect_strategy("user: one\nassistant: two\nA short note.") is Strategy.DOCUMENT


# ---------------------------------------------------------------------- smart_split
def test_short_text_is_one_chunk() -> None:
    assert smart_split("hello") == ["hello"]
    assert smart_split("   ") == []


def test_chunks_are_bounded_overlap_and_cover_the_text() -> None:
    text = long_text()
    chunks = smart_split(text)
    assert len(chunks) == 3
    assert all(len(c) <= SMART_SPLIT_MAX_CHARS for c in chunks)
    position = 0
    for i, chunk in enumerate(chunks):
        start = text.index(chunk, max(0, position - SMART_SPLIT_OVERLAP - 1))
        if i:
            assert start == position - SMART_SPLIT_OVERLAP  # 2,000 characters shared
        position = start + len(chunk)
    assert position == len(text)


def test_cuts_prefer_heading_then_paragraph_then_line_then_hard() -> None:
    body = "x" * 60
    heading = f"{body}\n\nparagraph\n## Heading\n{body}"
    assert smart_split(heading, 80, 10)[0].endswith("paragraph\n")
    paragraph = f"{body}\nline\n\n{body}"
    assert smart_split(paragraph, 80, 10)[0].endswith("line\n\n")
    line = f"{body}\nline {body}"
    assert smart_split(line, 80, 10)[0].endswith(f"{body}\n")
    hard = "y" * 200
    assert [len(c) for c in smart_split(hard, 80, 10)] == [80, 80, 60]


def test_sections_split_at_one_and_two_hashes_only() -> None:
    sections = split_sections("intro\n# A\ntext a\n### deeper\nstill a\n## B\ntext b")
    assert [s.heading for s in sections] == ["", "A", "B"]
    assert "### deeper" in sections[1].text
    assert len(split_sections(handbook())) == 1 + len(
        HANDBOOK_SECTIONS
    )  # the title holds the intro


def test_first_sentence_is_a_rule_summary() -> None:
    assert first_sentence("## Title\nmore", 50) == "Title"
    assert first_sentence("First one. Second one.", 50) == "First one."
    assert first_sentence("没有句号的中文句子。后面", 50) == "没有句号的中文句子。"
    assert first_sentence("a" * 100, 10) == "a" * 9 + "…"


# ---------------------------------------------------------------------- formats
def test_markdown_and_text() -> None:
    assert decode(handbook().encode(), "h.md").format is Format.MARKDOWN
    assert decode(b"plain words", "n.txt").format is Format.TEXT
    assert decode("\ufeffwith a BOM".encode(), "n.txt").text == "with a BOM"


@pytest.mark.parametrize(
    ("data", "fmt"),
    [
        (chatgpt_export(), Format.CHATGPT),
        (claude_export(), Format.CLAUDE),
        (jsonl_chat(), Format.JSONL),
        (json.dumps([{"role": r, "content": t} for r, t in CHAT]).encode(), Format.MESSAGES),
    ],
)
def test_chat_exports_become_conversations(data: bytes, fmt: Format) -> None:
    decoded = decode(data, "export.json")
    assert decoded.format is fmt
    assert len(decoded.conversations) == 1
    messages = decoded.conversations[0].messages
    assert [(m["role"], m["content"]) for m in messages] == CHAT


def test_chatgpt_follows_the_current_branch() -> None:
    export = json.loads(chatgpt_export())
    mapping = export[0]["mapping"]
    mapping["edit"] = {  # an abandoned edit branch off the second message
        "id": "edit",
        "message": {"author": {"role": "user"}, "content": {"parts": ["abandoned"]}},
        "parent": "n1",
        "children": [],
    }
    decoded = decode(json.dumps(export).encode(), "conversations.json")
    assert "abandoned" not in decoded.text


def test_json_that_is_not_a_chat_is_text() -> None:
    decoded = decode(b'{"settings": {"theme": "dark"}}', "config.json")
    assert decoded.format is Format.TEXT
    assert not decoded.conversations


def test_pdf_text_layer_is_read() -> None:
    decoded = decode(pdf(PDF_LINES), "notes.pdf")
    assert decoded.format is Format.PDF
    assert all(line in decoded.text for line in PDF_LINES)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (PNG, "binary file"),
        ("café".encode("latin-1"), "not valid UTF-8"),
        (b"%PDF-1.7\nthis is no pdf", "not a readable PDF"),
        (b"   \n", "empty"),
    ],
)
def test_bad_files_are_refused_clearly(data: bytes, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        decode(data, "upload.bin")
