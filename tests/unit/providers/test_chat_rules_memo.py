"""What the Chat rules remember across requests never changes what they answer: the
schema rules' findings are remembered by the tools list's text, and the rules a body calls
for by its key set and flavour."""

from __future__ import annotations

from typing import Any

import pytest

from mockllm.core.conversation import Conversation, Tool
from mockllm.core.scenario import Reply, Scenario, Turn
from mockllm.core.validation import RuleContext, Violation
from mockllm.errors import RequestError
from mockllm.providers.openai_chat import ChatCompletions
from mockllm.providers.openai_chat_rules import RULES

SCENARIO = Scenario("s", (Turn(Reply(text="ok")),))


def run(body: dict[str, Any], flavor: str = "openai") -> list[Violation]:
    return RULES.run(body, RuleContext(Conversation("m", ()), SCENARIO, flavor))


def strict_tool(properties: dict[str, Any]) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    return {"type": "function", "function": {"name": "f", "strict": True, "parameters": schema}}


def test_a_repeated_tools_list_is_answered_the_same_each_time() -> None:
    body = {"model": "m", "messages": [], "tools": [strict_tool({"a": {"type": "string"}})]}
    first, again = run(body), run({**body, "messages": [{"role": "user", "content": "x"}]})
    assert [v.rule for v in first] == ["chat.strict_required_incomplete"]
    assert again == first
    fixed = strict_tool({"a": {"type": "string"}})
    fixed["function"]["parameters"]["required"] = ["a"]
    assert run({**body, "tools": [fixed]}) == []  # another list: checked anew


def test_the_key_order_of_a_tools_list_still_names_its_first_missing_property() -> None:
    ab = strict_tool({"a": {"type": "string"}, "b": {"type": "string"}})
    ba = strict_tool({"b": {"type": "string"}, "a": {"type": "string"}})
    for tool, first in ((ab, "a"), (ba, "b"), (ab, "a")):
        (found,) = run({"model": "m", "messages": [], "tools": [tool]})
        assert found.message.endswith(f"Missing '{first}'.")


def test_a_flavours_own_rule_runs_on_that_flavour_only_whatever_ran_before() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "y"},
    ]
    body = {"model": "deepseek-reasoner", "messages": messages}
    for flavor, rules in (("openai", []), ("deepseek", ["deepseek.reasoning_content_missing"])):
        for _ in range(2):  # the second time from the remembered rule list
            assert [v.rule for v in run(body, flavor)] == rules
    assert run(body, "openai") == []


def test_a_repeated_tools_list_is_parsed_once_and_a_bad_one_refused_each_time() -> None:
    """The Chat parse keeps a tools list's Tools by its text, which it hands the schema
    rules (Parsed.views): they answer as if they had made the text themselves."""
    tools = [strict_tool({"a": {"type": "string"}})]
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": tools}
    first = ChatCompletions().parse(body)
    again = ChatCompletions().parse({**body, "tools": [strict_tool({"a": {"type": "string"}})]})
    assert again.conversation.tools is first.conversation.tools  # the same text: kept
    assert first.conversation.tools == (Tool("f", tools[0]["function"]["parameters"], True),)
    ctx = RuleContext(first.conversation, SCENARIO, "openai", dict(first.views))
    assert RULES.run(body, ctx) == run(body)
    bad = {**body, "tools": [{"type": "function", "function": {}}]}
    for _ in range(2):  # a refused list is never kept
        with pytest.raises(RequestError, match=r"tools\[0\]\.function\.name"):
            ChatCompletions().parse(bad)
