"""Could any model give this reply to this request? (docs/validation.md, "Replies no model
could give")

A request constrains what a model may answer: with no tools offered, or `tool_choice:
none`, it cannot call one; with `required` (Anthropic `any`, Gemini `ANY`) it must; with a
tool named it must call that tool; with parallel calls off it makes at most one call. A
scripted reply outside those bounds is what no model could answer: served, it would test
a path the harness never meets against a real API (smolagents, offered no tools at
`max_steps`, got a call and the verdict then blamed it).

What the request asks for explicitly (`tool_choice`, parallel calls off) only a harness
sends, meaning it: strict mode refuses such a reply, warn mode serves and logs it. A call
with no tools offered at all is served and logged in both (never refused): a request
without tools is also how an SDK's parsing of a call is tested on the wire, where the
call is what the test wants; the log says what no model would do, and the verdict does
not blame the harness for a call it was never offered.
"""

from __future__ import annotations

from mockllm.core.conversation import Conversation
from mockllm.core.scenario import Reply
from mockllm.errors import Finding

IMPOSSIBLE = "impossible_reply"


def impossible_reply(
    scenario: str, index: int, why: str, conv: Conversation
) -> tuple[Finding, bool]:
    """The finding when no model could answer `conv` with turn `index`'s reply (`why`:
    what `impossible` said of it), and whether strict mode refuses it (not for a call with
    no tools offered: see above)."""
    refused = bool(conv.tools)
    served = "served as scripted. " if not refused else ""
    return Finding(
        IMPOSSIBLE,
        f"mockllm: turn {index} of scenario {scenario!r} {why}: no model could answer so; "
        f"{served}Script the reply this request allows (a turn keyed by `match:` answers "
        "such requests wherever they fall)"
        + ("" if not refused else ", or set `validation: warn` to serve it anyway"),
    ), refused


def impossible(reply: Reply, conv: Conversation) -> str | None:
    """Why no model could answer `conv` with `reply`, in words; None when one could."""
    scripted = reply.tool_calls
    # The usual request first, with nothing built: tools offered, no tool_choice (auto), at
    # most one call or parallel calls allowed.
    if (
        conv.tool_choice is None
        and (not scripted or conv.tools)
        and (len(scripted) <= 1 or conv.parallel_tool_calls)
    ):
        return None
    names = [c.name for c in scripted]
    calls = ", ".join(names)
    if names and not conv.tools:
        return f"scripts a call ({calls}), but the request offers no tools"
    choice = conv.effective_tool_choice
    if names and choice.mode == "none":
        return f"scripts a call ({calls}), but the request says tool_choice none"
    if not names and choice.mode in ("required", "tool"):
        return (
            f"scripts no call, but the request requires one (tool_choice {choice}): "
            "a model always calls a tool then"
        )
    if choice.mode == "tool" and any(n != choice.name for n in names):
        return f"scripts a call ({calls}), but the request forces the tool {choice.name!r}"
    if len(names) > 1 and not conv.parallel_tool_calls:
        return (
            f"scripts {len(names)} calls in one reply, but the request turns parallel calls "
            "off: a model makes at most one call then"
        )
    return None
