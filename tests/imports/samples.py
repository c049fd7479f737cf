"""Files to import, built in code so each test states what it imports."""

from __future__ import annotations

import io
import json
import random

from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

HANDBOOK_SECTIONS = {
    "On-call rotation": (
        "Every engineer joins the on-call rotation after their first month. A shift lasts one "
        "week and starts on Monday at ten in the morning. The pager escalates to the secondary "
        "after fifteen minutes without an acknowledgement. Write a short incident note for every "
        "page, even a false alarm, so the next person learns from it. Hand over open incidents "
        "in the Monday sync and update the runbook when a fix was not in it yet."
    ),
    "Deploying to production": (
        "Production deploys happen through the release pipeline only, never from a laptop. The "
        "pipeline runs the full test suite, builds the container image and rolls it out to one "
        "canary region first. Watch the error budget dashboard for twenty minutes before the "
        "rollout continues. Deploys are frozen on Fridays after two in the afternoon and during "
        "the last week of December. A rollback is one click in the pipeline and needs no approval."
    ),
    "Code review": (
        "Every change needs one approving review from someone who did not write it. Reviewers "
        "answer within one working day. Keep pull requests small: under four hundred changed "
        "lines is the rule of thumb. Explain the why in the description, not only the what. "
        "Automated formatting and linting run before review, so reviewers spend their attention "
        "on design, naming and tests rather than on whitespace."
    ),
    "Holidays and leave": (
        "Request holidays in the leave calendar at least two weeks ahead for anything longer "
        "than three days. The team keeps at least two engineers available in every week. Sick "
        "leave needs no approval: tell your lead in the morning and rest. Public holidays follow "
        "the office location in your contract. Unused holiday days carry over until the end of "
        "March of the following year and then expire."
    ),
    "Security basics": (
        "Use the password manager for every shared credential and never paste secrets into chat. "
        "Hardware security keys are required for the cloud console and for source control. "
        "Report a lost laptop to the security channel within one hour. Production databases are "
        "reachable through the bastion host only, and every session is recorded. Customer data "
        "never leaves the production environment, not even for debugging."
    ),
    "Meetings": (
        "The team meets for fifteen minutes every morning at half past nine to plan the day. "
        "Planning happens every second Tuesday and takes at most one hour. Meetings without an "
        "agenda are declined politely. Notes from every decision meeting go into the decision "
        "log with the date, the people present, the options considered and the reason for the "
        "choice, so that anyone can later find out why something was decided."
    ),
    "Onboarding": (
        "A new engineer gets a buddy for the first six weeks. The first week is for accounts, "
        "the local development setup and reading the architecture notes. By the end of the "
        "second week the new engineer ships a small change to production with their buddy. "
        "Onboarding feedback goes to the engineering manager after thirty days, and the "
        "checklist is updated with anything that was missing or wrong."
    ),
}


def handbook() -> str:
    """A Markdown handbook: a title, an intro line and six ``##`` sections, over 500 words."""
    parts = ["# Engineering handbook", "", "How the platform team works, in one place.", ""]
    for heading, body in HANDBOOK_SECTIONS.items():
        parts += [f"## {heading}", "", body, ""]
    return "\n".join(parts)


WORDS = {
    "who": ["the harbour master", "a travelling clockmaker", "the village baker", "an old sailor",
            "the botanist", "a young cartographer", "the schoolteacher", "the innkeeper"],
    "did": ["repaired", "painted", "measured", "described", "counted", "sketched", "sold",
            "catalogued"],
    "what": ["the copper weathervane", "forty wooden crates", "the northern lighthouse",
             "a map of the salt marshes", "the tide tables", "a basket of quinces",
             "the church organ", "three brass telescopes"],
    "when": ["before dawn", "in late autumn", "during the storm", "on market day",
             "after the festival", "at low tide", "in the spring of 1887", "every Sunday"],
}  # fmt: skip
NEEDLE = "The lighthouse keeper's secret password is marmalade-4471."


def long_text(chars: int = 170_000, seed: int = 7) -> str:
    """Plain prose of paragraphs (no headings) with one unique sentence in the middle."""
    rng = random.Random(seed)
    paragraphs: list[str] = []
    size = 0
    while size < chars:
        sentences = [
            f"{rng.choice(WORDS['when']).capitalize()}, {rng.choice(WORDS['who'])} "
            f"{rng.choice(WORDS['did'])} {rng.choice(WORDS['what'])}."
            for _ in range(rng.randint(4, 8))
        ]
        if not any(NEEDLE in p for p in paragraphs) and size > chars // 2:
            sentences.insert(2, NEEDLE)
        paragraph = " ".join(sentences)
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(paragraphs)


CHAT = [
    ("user", "Hi there!"),
    ("assistant", "Hello! How can I help?"),
    ("user", "I prefer green tea over coffee in the morning."),
    ("assistant", "Noted, green tea it is."),
    ("user", "My name is Dana and I live in Lisbon."),
    ("assistant", "Nice to meet you, Dana."),
]


def chatgpt_export() -> bytes:
    """``conversations.json`` of a ChatGPT export: a mapping tree per conversation."""
    mapping: dict[str, dict[str, object]] = {
        "root": {"id": "root", "message": None, "parent": None, "children": ["n0"]}
    }
    for i, (role, text) in enumerate(CHAT):
        node = f"n{i}"
        mapping[node] = {
            "id": node,
            "message": {
                "id": node,
                "author": {"role": role},
                "create_time": 1_700_000_000 + i,
                "content": {"content_type": "text", "parts": [text]},
            },
            "parent": "root" if i == 0 else f"n{i - 1}",
            "children": [f"n{i + 1}"] if i + 1 < len(CHAT) else [],
        }
    conversation = {
        "title": "Morning drinks",
        "mapping": mapping,
        "current_node": f"n{len(CHAT) - 1}",
    }
    return json.dumps([conversation]).encode()


def claude_export() -> bytes:
    messages = [
        {"sender": "human" if role == "user" else "assistant", "text": text,
         "created_at": f"2024-05-0{i + 1}T10:00:00Z"}
        for i, (role, text) in enumerate(CHAT)
    ]  # fmt: skip
    return json.dumps([{"uuid": "c1", "name": "Drinks", "chat_messages": messages}]).encode()


def jsonl_chat() -> bytes:
    return "\n".join(json.dumps({"role": r, "content": t}) for r, t in CHAT).encode()


def pdf(lines: list[str]) -> bytes:
    """A one-page PDF with a real text layer (Helvetica), as a word processor would write."""
    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    fonts = DictionaryObject({NameObject("/F1"): writer._add_object(font)})
    page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})
    ops = ["BT", "/F1 12 Tf", "72 720 Td"]
    for line in lines:
        escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        ops += [f"({escaped}) Tj", "0 -16 Td"]
    ops.append("ET")
    stream = DecodedStreamObject()
    stream.set_data("\n".join(ops).encode("latin-1"))
    page[NameObject("/Contents")] = writer._add_object(stream)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


PDF_LINES = [
    "Quarterly planning notes.",
    "The storage migration finishes before the end of June.",
    "Owner of the migration: Priya from the data team.",
]
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
