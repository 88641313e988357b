"""Responses requests that differ only by their `input` share one rendered template
(`Parsed.id_part`, serving/rendered.py): each still gets the bytes its own render gives,
its own content-addressed response id included, plain and streamed, in the log as sent,
and kept for GET and previous_response_id under that id."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm.core.cache import Bounded
from mockllm.core.encoding import canonical_json
from mockllm.core.engine import Resolved
from mockllm.loading.loader import load_mapping
from mockllm.providers.openai_responses import Responses, _canonical
from mockllm.serving.exchange import Exchanges
from mockllm.serving.rendered import Rendered
from mockllm.serving.server import build_app
from tests.support.hypothesis_profiles import examples

from ..asgi import post, request
from ..stores import at_once

SCENARIO = {
    "name": "agent",
    "turns": [
        {
            "repeat": True,
            "reply": {
                "reasoning": "look it up",
                "text": "checking",
                "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
            },
        }
    ],
}
TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]
BODY = {"model": "gpt-4.1", "tools": TOOLS, "include": ["reasoning.encrypted_content"]}


def send(app: Any, path: str, body: dict[str, Any]) -> bytes:
    status, sent = at_once(post(app, path, json.dumps(body).encode()))
    assert status == 200, sent
    return sent


def exchange(inputs: list[Any], stream: bool) -> tuple[Any, list[bytes]]:
    """Each input as the next attempt at turn 0 in one session, then in a fresh session."""
    app = build_app([load_mapping(SCENARIO)])
    paths = ["/s/agent/one/v1/responses"] * len(inputs) + ["/s/agent/two/v1/responses"]
    bodies = [{**BODY, "input": i, "stream": stream} for i in [*inputs, inputs[0]]]
    return app, [send(app, p, b) for p, b in zip(paths, bodies, strict=True)]


def direct(
    self: Exchanges, adapter: Any, resolved: Resolved, parsed: Any, stream: bool
) -> Rendered:
    return self._draw(adapter, resolved, parsed, stream)  # no template, no cache


# The same token counts (the usage shows in the bytes), one a list of items; then a longer
INPUTS = ["ask 1", "ask 2", [{"role": "user", "content": "ask 3"}], "ask 4", "x " * 100]


def shared_templates(app: Any) -> int:
    """Templates made whose ids take each request's own part."""
    made = app.exchanges._rendered.values()
    return sum(any(b"%(part)b" in plan[6][0] for plan in r.plans) for r in made)


@pytest.mark.parametrize("stream", [False, True])
def test_distinct_inputs_get_the_bytes_their_own_render_gives(
    stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, shared = exchange(INPUTS, stream)
    assert len(set(shared)) == len(INPUTS)  # every input and attempt its own ids
    assert shared[-1] == shared[0]  # the same input at attempt 1 of another session
    assert shared_templates(app) == 1  # made at the second input, reused by the next two
    entries = list(app.journal.entries())
    assert [e.to_json()["response"]["body"].encode() for e in entries] == shared
    app.exchanges._rendered = Bounded(512)  # the templates gone: the log makes them again
    assert [e.to_json()["response"]["body"].encode() for e in entries] == shared
    monkeypatch.setattr(Exchanges, "_render", direct)
    assert exchange(INPUTS, stream)[1] == shared


def test_each_response_is_kept_under_its_own_id_and_continued() -> None:
    app, shared = exchange(INPUTS, False)
    for body in shared:
        response_id = json.loads(body)["id"]
        status, got = at_once(app_get(app, f"/s/agent/one/v1/responses/{response_id}"))
        assert (status, got) == (200, body)
    last = json.loads(shared[-2])
    call = next(i for i in last["output"] if i["type"] == "function_call")
    follow = {
        **BODY,
        "previous_response_id": last["id"],
        "input": [{"type": "function_call_output", "call_id": call["call_id"], "output": "9"}],
    }
    send(app, "/s/agent/one/v1/responses", follow)


async def app_get(app: Any, path: str) -> tuple[int, bytes]:
    return await request(app, "GET", path)


def test_only_a_request_whose_input_offers_no_tools_shares_a_template() -> None:
    adapter = Responses()
    plain = adapter.parse({**BODY, "input": "hi"})
    assert plain.id_part == plain.options["fingerprint"]
    assert plain.render_key == adapter.parse({**BODY, "input": "bye"}).render_key
    offering = [{"type": "additional_tools", "tools": TOOLS}, {"role": "user", "content": "hi"}]
    codex = adapter.parse({**BODY, "input": offering})
    assert codex.id_part is None and codex.render_key == codex.options["fingerprint"]


fields = st.fixed_dictionaries(
    {},
    optional={
        "instructions": st.text(max_size=5),
        "temperature": st.floats(0, 2),
        "metadata": st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
        "store": st.booleans(),
        "stream": st.booleans(),
        "text": st.just({"verbosity": "low"}),
    },
)


@settings(max_examples=examples(40), deadline=None)
@given(shape=fields, inputs=st.lists(st.text(min_size=1, max_size=8), min_size=2, max_size=4))
def test_any_request_shape_gives_its_own_render(shape: dict[str, Any], inputs: list[str]) -> None:
    def run() -> list[bytes]:
        app = build_app([load_mapping(SCENARIO)])
        bodies = [{**BODY, **shape, "input": i} for i in inputs]
        return [send(app, "/s/agent/one/v1/responses", b) for b in bodies]

    shared = run()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Exchanges, "_render", direct)
        assert run() == shared


keys = st.sampled_from(["include", "inp", "input", "inputs", "model", "tools", "Input", ""])
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=10,
)


@settings(max_examples=examples(500))
@given(body=st.dictionaries(keys | st.text(max_size=6), values), ask=values.filter(bool))
def test_the_fingerprint_text_is_the_canonical_json_of_the_whole_body(
    body: dict[str, Any], ask: Any
) -> None:
    """The shape's two halves and the input put together are `canonical_json(body)`: the
    response id (its hash) is the one a whole encoding gives."""
    body = {**body, "input": ask}
    shape, text = _canonical(body, True)
    assert text == canonical_json(body)
    assert shape is not None and _canonical({**body, "input": "other"}, True)[0] == shape
