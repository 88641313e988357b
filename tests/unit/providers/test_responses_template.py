"""The Responses object is written from a template of its static fields (`_finished`), not
from the dict `_response` builds for the stream's events: the two must never drift apart.
Random request fields (any JSON in any echoed field, the stream flag, the model) and every
kind of reply (text, calls, reasoning, cut short) must give the same bytes both ways."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm.core.encoding import dumps
from mockllm.core.engine import Resolved
from mockllm.loading.loader import load_mapping
from mockllm.providers.openai_responses import ECHOED, INCOMPLETE_REASONS, Responses
from tests.support.hypothesis_profiles import examples

REPLIES = load_mapping(
    {
        "name": "template",
        "turns": [
            {"reply": {"text": "Hello, «world»!"}},
            {"reply": {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}},
            {"reply": {"text": "cut", "finish": "length"}},
            {"reply": {"text": "", "reasoning": "think", "finish": "content_filter"}},
            {
                "reply": {
                    "text": "both",
                    "reasoning": "hmm",
                    "tool_calls": [{"id": "call_x", "name": "a", "arguments": "{}"}] * 2,
                }
            },
        ],
    }
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
echoed = st.dictionaries(st.sampled_from(sorted(ECHOED)), json_values, max_size=8)
requests = st.fixed_dictionaries(
    {"model": st.sampled_from(["gpt-4.1", "gpt-5", "o3-mini", "ünknown"]), "input": st.text()},
    optional={"stream": st.booleans(), "include": st.just(["reasoning.encrypted_content"])},
)


@settings(max_examples=examples(300))
@given(
    request=requests,
    fields=echoed,
    turn=st.integers(0, len(REPLIES.turns) - 1),
    created=st.integers(0, 2**40),
)
def test_the_template_writes_what_the_full_render_writes(
    request: dict[str, Any], fields: dict[str, Any], turn: int, created: int
) -> None:
    fields.pop("previous_response_id", None)  # names a stored response: tested end to end
    body = {**request, **fields}
    adapter = Responses()
    try:
        parsed = adapter.parse(json.loads(json.dumps(body)))
    except Exception:  # a field the parser refuses (tools, tool_choice): nothing to render
        return
    reply = REPLIES.turns[turn].reply
    resolved = Resolved(REPLIES, turn, reply, 12, 7, 3 if reply.reasoning else 0, created)
    output = adapter._output(resolved, parsed)
    incomplete = reply.finish in INCOMPLETE_REASONS
    if incomplete and output and "status" in output[-1]:
        output[-1]["status"] = "incomplete"
    status = "incomplete" if incomplete else "completed"
    assert adapter.render(resolved, parsed).data == dumps(
        adapter._response(resolved, parsed, status, output)
    )
