"""Tool search (docs/scenarios.md, "Tool search"): a reply's `search_tools: QUERY` made
concrete for one request, and the search mockllm answers itself when the provider runs it.

A request offers tools `defer_loading: true`: the model sees them only once a search has
found them. Where the client runs the search (Claude Code's `ToolSearch`, a Responses
`tool_search` with `execution: client`) the reply is a call of that tool, and the client
answers it; where the provider does (Anthropic's `tool_search_tool_regex`/`_bm25`,
Responses' hosted `tool_search`), mockllm is the provider: it looks the query up in the
request's deferred tools and the reply carries what it found.
"""

from __future__ import annotations

import re
from dataclasses import replace

from mockllm.core.conversation import Conversation, Tool, ToolSearch
from mockllm.core.encoding import compact_json
from mockllm.core.scenario import Reply, Scenario, ScriptedCall
from mockllm.errors import RequestError

# How many tools one search hands over at most (the providers return a few best matches;
# Anthropic's documentation speaks of 3-5 tools loaded per search).
MOST_FOUND = 5


def searched(scenario: Scenario, index: int, reply: Reply, conv: Conversation) -> Reply:
    """`reply` with its search made concrete for `conv`: a call of the client's search tool
    put first, or the deferred tools a server-side search finds. A request that offers no
    tool search cannot be answered by a search: a 400 that says so, never a call of a tool
    the model was not given."""
    if reply.search is None:
        return reply
    offered = conv.tool_search or _named(conv)
    if offered is None:
        message = (
            f"mockllm: scenario {scenario.name!r} turn {index} searches for tools "
            f"(search_tools: {reply.search!r}), but the request offers no tool search (a "
            "client tool such as Claude Code's ToolSearch, Anthropic's tool_search_tool_regex "
            "or _bm25, or a Responses tool_search), so no model could search here"
        )
        raise RequestError(400, message, kind="unrepresentable_reply", code="unrepresentable_reply")
    if offered.kind == "client":
        call = ScriptedCall(offered.name, compact_json({offered.query_key: reply.search}))
        calls = (call, *reply.tool_calls)
        return replace(reply, search=None, tool_calls=calls, finish="tool_calls")
    regex = offered.query_key == "pattern"
    return replace(reply, found=find(reply.search, conv.deferred, regex))


# Client-side searches that are plain tools, on any wire: Claude Code's, and the name the
# Responses API and the OpenAI Agents SDK give theirs.
CLIENT_SEARCHES = ("ToolSearch", "tool_search")


def _named(conv: Conversation) -> ToolSearch | None:
    """A search tool the client runs itself, offered as a plain tool under a known name."""
    name = next((n for n in CLIENT_SEARCHES if n in conv.tool_names), None)
    return ToolSearch("client", name) if name is not None else None


def find(query: str, tools: tuple[Tool, ...], regex: bool = False) -> tuple[str, ...]:
    """The names of the tools `query` finds, best first, at most MOST_FOUND: a regular
    expression searched in each name and description (a pattern that does not compile is
    read as plain text), or else words, ranked by how many of them a tool's text holds."""
    texts = [(t.name, f"{t.name}\n{t.description}") for t in tools]
    if regex:
        try:
            pattern = re.compile(query)
        except re.error:
            pattern = re.compile(re.escape(query))
        return tuple(name for name, text in texts if pattern.search(text))[:MOST_FOUND]
    words = [w for w in re.split(r"[\W_]+", query.lower()) if w]
    if query.startswith("select:"):  # Claude Code's own form: the names, comma-separated
        chosen = [n.strip() for n in query.removeprefix("select:").split(",")]
        return tuple(name for name, _ in texts if name in chosen)[:MOST_FOUND]
    scored = [
        (sum(w in text.lower() for w in words), i, name) for i, (name, text) in enumerate(texts)
    ]
    ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
    return tuple(name for _, _, name in ranked)[:MOST_FOUND]
