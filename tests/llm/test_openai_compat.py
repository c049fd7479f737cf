"""The OpenAI-compatible LLM client against the scripted server: the real SDK runs end to end."""

from __future__ import annotations

import json
import socket

import pytest
from pydantic import BaseModel
from scripted_llm import Recorded, Reply, ScriptedLLM

from memoryd.errors import MemorydError
from memoryd.llm import LLMError, OpenAICompatibleLLM, Usage

MODEL = "scripted-model"
PROMPT = [
    {"role": "system", "content": "Extract facts as JSON."},
    {"role": "user", "content": "I like tea and I live in Oslo."},
]
GOOD = '{"facts": [{"text": "likes tea", "importance": 0.7}, {"text": "lives in Oslo"}]}'


class Fact(BaseModel):
    text: str
    importance: float = 0.5


class Facts(BaseModel):
    facts: list[Fact]


def client(server: ScriptedLLM, **options: object) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(MODEL, server.url, **options)  # type: ignore[arg-type]


def texts(facts: Facts) -> list[str]:
    return [f.text for f in facts.facts]


def test_a_clean_answer_is_validated_in_one_call(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(GOOD)
    usage = Usage()
    facts = client(scripted_llm).complete_json(PROMPT, Facts, usage=usage)
    assert texts(facts) == ["likes tea", "lives in Oslo"]
    assert facts.facts[0].importance == 0.7
    (request,) = scripted_llm.chat_requests
    assert request.body["model"] == MODEL
    assert request.body["messages"] == PROMPT
    assert request.body["temperature"] == 0
    assert request.response_format == {"type": "json_object"}
    assert "max_tokens" not in request.body
    assert request.headers["authorization"] == "Bearer not-needed"
    assert usage.as_dict() == {
        "calls": 1,
        "prompt_tokens": 11,
        "completion_tokens": 7,
        "failures": 0,
        "truncated": 0,
    }


@pytest.mark.parametrize(
    "answer",
    [
        f"Sure! Here are the facts:\n{GOOD}\nLet me know if you need more.",
        f"```json\n{GOOD}\n```",
        f"<think>The user likes tea. {{not json}}</think>\n```json\n{GOOD}\n```",
        GOOD.replace('"lives in Oslo"}', '"lives in Oslo",},'),  # trailing commas
    ],
)
def test_local_model_answers_are_mended_without_a_retry(
    scripted_llm: ScriptedLLM, answer: str
) -> None:
    scripted_llm.script(answer)
    usage = Usage()
    facts = client(scripted_llm).complete_json(PROMPT, Facts, usage=usage)
    assert texts(facts) == ["likes tea", "lives in Oslo"]
    assert (usage.calls, usage.failures) == (1, 0)


def test_a_truncated_answer_keeps_its_complete_facts(scripted_llm: ScriptedLLM) -> None:
    cut = '{"facts": [{"text": "likes tea"}, {"text": "lives in Oslo"}, {"text": "works as a nur'
    scripted_llm.script(Reply(content=cut, finish_reason="length"))
    usage = Usage()
    facts = client(scripted_llm).complete_json(PROMPT, Facts, usage=usage)
    assert texts(facts) == ["likes tea", "lives in Oslo"]
    assert usage.truncated == 1  # the caller can tell a cut answer from a complete one


def test_wrong_types_are_retried_with_the_error_quoted(scripted_llm: ScriptedLLM) -> None:
    wrong = '{"facts": [{"text": "likes tea", "importance": "very"}]}'
    scripted_llm.script(wrong, GOOD)
    usage = Usage()
    facts = client(scripted_llm).complete_json(PROMPT, Facts, usage=usage)
    assert texts(facts) == ["likes tea", "lives in Oslo"]
    _, second = scripted_llm.chat_requests
    assert second.messages[: len(PROMPT)] == PROMPT
    assert second.messages[len(PROMPT)] == {"role": "assistant", "content": wrong}
    correction = second.messages[-1]
    assert correction["role"] == "user"
    assert "facts.0.importance" in correction["content"]
    assert "valid number" in correction["content"]
    assert '"Fact"' in correction["content"]  # the schema is quoted for the model
    assert len(second.messages) == len(PROMPT) + 2
    assert len(PROMPT) == 2  # the caller's list is not extended
    assert usage.as_dict() == {
        "calls": 2,
        "prompt_tokens": 22,
        "completion_tokens": 14,
        "failures": 1,
        "truncated": 0,
    }


def test_two_failures_raise_an_llm_error(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script('{"facts": "none"}', '{"items": []}')
    usage = Usage()
    with pytest.raises(LLMError, match=r"no valid Facts in 2 attempts.*facts: Field required") as e:
        client(scripted_llm).complete_json(PROMPT, Facts, usage=usage)
    assert isinstance(e.value, MemorydError)
    assert (e.value.code, e.value.http_status) == ("llm_error", 502)
    assert f"openai:{MODEL}" in e.value.message
    assert len(scripted_llm.chat_requests) == 2  # once and once only
    assert (usage.calls, usage.failures) == (2, 2)


def test_a_refusal_is_a_failure_like_any_other(scripted_llm: ScriptedLLM) -> None:
    refusal = "I'm sorry, but I can't help with that."
    scripted_llm.script(refusal, GOOD)
    usage = Usage()
    assert texts(client(scripted_llm).complete_json(PROMPT, Facts, usage=usage))[0] == "likes tea"
    assert "no JSON object or array" in scripted_llm.chat_requests[1].messages[-1]["content"]
    assert usage.failures == 1

    scripted_llm.script(refusal, refusal)
    with pytest.raises(LLMError, match="no JSON object or array"):
        client(scripted_llm).complete_json(PROMPT, Facts)


def test_a_refusal_field_with_no_content_is_the_answer(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(
        Reply(content=None, refusal="I can't assist with that."), Reply(content=None)
    )
    with pytest.raises(LLMError, match="the answer is empty"):
        client(scripted_llm).complete_json(PROMPT, Facts)
    first_retry = scripted_llm.chat_requests[1].messages
    assert first_retry[-2] == {"role": "assistant", "content": "I can't assist with that."}


def test_a_server_error_is_not_retried(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(Reply(status=500, error="model crashed"), GOOD)
    usage = Usage()
    with pytest.raises(LLMError, match=r"HTTP 500.*model crashed"):
        client(scripted_llm).complete_json(PROMPT, Facts, usage=usage)
    assert len(scripted_llm.chat_requests) == 1
    assert scripted_llm.pending == 1
    assert (usage.calls, usage.failures) == (1, 1)


def test_a_slow_server_fails_at_the_configured_timeout(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(Reply(content=GOOD, delay_s=5))
    llm = client(scripted_llm, timeout_s=0.5)
    with pytest.raises(LLMError, match=r"no answer within 0\.5 s"):
        llm.complete_json(PROMPT, Facts)
    assert len(scripted_llm.chat_requests) == 1  # the SDK's own retries are off


def test_an_llm_that_is_down_is_an_llm_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    llm = OpenAICompatibleLLM(MODEL, f"http://127.0.0.1:{port}/v1", timeout_s=5)
    usage = Usage()
    with pytest.raises(LLMError, match=f"cannot reach openai:{MODEL} at http://127.0.0.1:{port}"):
        llm.complete_json(PROMPT, Facts, usage=usage)
    assert (usage.calls, usage.failures) == (1, 1)


def test_a_server_refusing_response_format_is_asked_without_it(
    scripted_llm: ScriptedLLM,
) -> None:
    scripted_llm.rejects_response_format = True
    scripted_llm.script(GOOD, GOOD)
    llm = client(scripted_llm)
    usage = Usage()
    assert texts(llm.complete_json(PROMPT, Facts, usage=usage))[1] == "lives in Oslo"
    assert not llm.sends_response_format
    assert texts(llm.complete_json(PROMPT, Facts, usage=usage))[1] == "lives in Oslo"
    formats = [r.response_format for r in scripted_llm.chat_requests]
    assert formats == [{"type": "json_object"}, None, None]
    assert (usage.calls, usage.failures) == (2, 0)


def test_any_400_before_response_format_worked_drops_it(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(Reply(status=400, error="Extra inputs are not permitted"), GOOD)
    llm = client(scripted_llm)
    assert texts(llm.complete_json(PROMPT, Facts))[0] == "likes tea"
    assert [r.response_format for r in scripted_llm.chat_requests] == [
        {"type": "json_object"},
        None,
    ]


def test_a_400_after_response_format_worked_is_an_error(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(GOOD, Reply(status=400, error="context length exceeded"))
    llm = client(scripted_llm)
    llm.complete_json(PROMPT, Facts)
    with pytest.raises(LLMError, match=r"HTTP 400.*context length exceeded"):
        llm.complete_json(PROMPT, Facts)
    assert llm.sends_response_format
    assert len(scripted_llm.chat_requests) == 2


def test_json_mode_off_never_sends_response_format(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(GOOD)
    client(scripted_llm, json_mode=False).complete_json(PROMPT, Facts)
    assert "response_format" not in scripted_llm.chat_requests[0].body


def test_plain_chat_sends_no_response_format(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(Reply(content="A summary.", prompt_tokens=5, completion_tokens=2))
    result = client(scripted_llm, temperature=0.3, max_tokens=64).chat(PROMPT, json_mode=False)
    assert (result.text, result.prompt_tokens, result.completion_tokens) == ("A summary.", 5, 2)
    assert result.finish_reason == "stop"
    body = scripted_llm.chat_requests[0].body
    assert "response_format" not in body
    assert (body["temperature"], body["max_tokens"]) == (0.3, 64)


def test_usage_accumulates_over_calls_and_tasks(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(
        Reply(content=GOOD, prompt_tokens=100, completion_tokens=40),
        Reply(content="not json", prompt_tokens=120, completion_tokens=3),
        Reply(content=GOOD, prompt_tokens=130, completion_tokens=40),
        Reply(content=GOOD, usage=False),  # local servers may not report usage
    )
    llm = client(scripted_llm)
    batch, job = Usage(), Usage()
    llm.complete_json(PROMPT, Facts, usage=batch)
    llm.complete_json(PROMPT, Facts, usage=batch)
    assert batch.as_dict() == {
        "calls": 3,
        "prompt_tokens": 350,
        "completion_tokens": 83,
        "failures": 1,
        "truncated": 0,
    }
    assert batch.total_tokens == 433
    llm.complete_json(PROMPT, Facts, usage=job)
    assert job.as_dict() == {
        "calls": 1,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "failures": 0,
        "truncated": 0,
    }
    job.add(batch)
    assert job.as_dict() == {
        "calls": 4,
        "prompt_tokens": 350,
        "completion_tokens": 83,
        "failures": 1,
        "truncated": 0,
    }


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b'{"object": "chat.completion", "choices": []}', "without a choice"),
        (b"<html>Bad gateway</html>", "not JSON"),
    ],
)
def test_a_body_that_is_not_a_completion_is_an_llm_error(
    scripted_llm: ScriptedLLM, raw: bytes, reason: str
) -> None:
    scripted_llm.script(Reply(raw=raw))
    with pytest.raises(LLMError, match=reason):
        client(scripted_llm).complete_json(PROMPT, Facts)
    assert len(scripted_llm.chat_requests) == 1


def test_a_responder_answers_once_the_script_is_used_up(scripted_llm: ScriptedLLM) -> None:
    def respond(request: Recorded) -> str:
        said = request.messages[-1]["content"]
        return json.dumps({"facts": [{"text": said.upper()}]})

    scripted_llm.script(GOOD)
    scripted_llm.responder = respond
    llm = client(scripted_llm)
    assert texts(llm.complete_json(PROMPT, Facts))[0] == "likes tea"
    assert texts(llm.complete_json([{"role": "user", "content": "hi"}], Facts)) == ["HI"]


def test_an_empty_script_fails_loudly(scripted_llm: ScriptedLLM) -> None:
    with pytest.raises(LLMError, match="no answer left"):
        client(scripted_llm).complete_json(PROMPT, Facts)
