"""Gemini answers read back for `mockllm record`: whole bodies and stream chunks."""

from __future__ import annotations

import json

from mockllm.providers.gemini_answers import GeminiAnswers


def chunk(parts: list[dict[str, object]], finish: str | None = None, **extra: object) -> str:
    candidate: dict[str, object] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return json.dumps({"candidates": [candidate], "responseId": "r1", **extra})


def test_a_stream_of_thought_text_and_calls_ends_with_the_finish_chunk() -> None:
    answers = GeminiAnswers()
    answers.event(None, chunk([{"text": "plan", "thought": True}]))
    answers.event(None, chunk([{"text": "Checking."}]))
    answers.event(
        None, chunk([{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}])
    )
    assert not answers.heard.complete  # no terminator event: the finish reason is the end
    usage = {"promptTokenCount": 7, "candidatesTokenCount": 5, "thoughtsTokenCount": 3}
    answers.event(None, chunk([{"text": ""}], "STOP", usageMetadata=usage))
    heard = answers.heard
    assert heard.complete and heard.reasoning == "plan" and heard.text == "Checking."
    assert [(c.name, c.arguments) for c in heard.calls] == [("get_weather", '{"city":"Paris"}')]
    assert heard.finish == "tool_calls"  # Gemini says STOP after calls too
    assert (heard.input_tokens, heard.output_tokens) == (7, 8)  # thoughts count as output


def test_an_empty_malformed_call_candidate_is_kept_as_an_unsendable_call() -> None:
    answers = GeminiAnswers()
    answers.body({"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL", "index": 0}]})
    reply = answers.heard.reply()
    (call,) = reply.tool_calls
    assert call.arguments_object() is None and reply.finish == "tool_calls"


def test_max_tokens_after_text_is_a_length_finish_not_a_call() -> None:
    answers = GeminiAnswers()
    answers.body(json.loads(chunk([{"text": "It is"}], "MAX_TOKENS")))
    reply = answers.heard.reply()
    assert reply.text == "It is" and reply.finish == "length" and not reply.tool_calls


def test_an_error_frame_and_an_error_body_keep_the_status_and_words() -> None:
    answers = GeminiAnswers()
    error = {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}
    answers.event(None, json.dumps(error))
    assert answers.heard.error is not None and answers.heard.error.type == "UNAVAILABLE"
    assert answers.error(error).message == "overloaded"
    assert answers.error("not json").message is None
