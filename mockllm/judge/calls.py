"""What the agent did, read from a session's log entries: the tool calls the model made
and the results the harness sent back, and the checks over them (docs/pytest.md, "What
the agent did").

One definition for every client: the Python `Session` runs these over the entries it
reads, and the server runs the same ones for `GET /_mockllm/calls` and
`POST /_mockllm/check`, which the Node client calls, so a failure reads the same words
in both languages. A check returns None when it holds, else a `Failure`: the headline,
what was expected and what happened (the transcript is added by the client).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

EntryJson = Mapping[str, Any]
_SHORT = 80  # characters of arguments and results in a failure's lines


class Failure(NamedTuple):
    headline: str
    expected: str
    happened: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"ok": False, **self._asdict()}


def tool_uses(entries: Iterable[EntryJson]) -> list[dict[str, Any]]:
    """Every call mockllm served whole, in order, with the result the harness sent back:
    `{id, name, arguments, args, turn, seq, result, answered_in}`. `args` is the
    arguments parsed (None when they are not JSON); `result` is `{content, is_error}`
    from the first later request that carried one for the call's id, or None;
    `answered_in` that request's seq."""
    ordered = sorted(entries, key=lambda e: int(e["seq"]))
    results = [(int(e["seq"]), r) for e in ordered for r in _results(e)]
    uses: list[dict[str, Any]] = []
    seen: set[str] = set()
    for e in ordered:
        response = e.get("response") or {}
        if response.get("status") != 200:
            continue
        for call in response.get("tool_calls") or ():
            if call["id"] in seen:  # a retried turn serves its ids again
                continue
            seen.add(call["id"])
            seq = int(e["seq"])
            answer = next(
                ((s, r) for s, r in results if s > seq and r["call_id"] == call["id"]), None
            )
            uses.append(
                {
                    "id": call["id"],
                    "name": call["name"],
                    "arguments": call.get("arguments", ""),
                    "args": _parse(call.get("arguments", "")),
                    "turn": e.get("turn"),
                    "seq": seq,
                    "result": None
                    if answer is None
                    else {
                        "content": answer[1].get("content", ""),
                        "is_error": answer[1].get("is_error"),
                    },
                    "answered_in": None if answer is None else answer[0],
                }
            )
    return uses


def matching(
    uses: Iterable[Mapping[str, Any]],
    name: str | None = None,
    args: Mapping[str, Any] | None = None,
) -> list[Mapping[str, Any]]:
    """The uses of tool `name` (any tool when None) whose arguments hold every key of
    `args` with an equal value (a subset match: other keys may be there too)."""
    return [u for u in uses if (name is None or u["name"] == name) and _holds(u["args"], args)]


def tool_called(
    uses: Sequence[Mapping[str, Any]],
    name: str,
    args: Mapping[str, Any] | None = None,
    times: int | None = None,
) -> Failure | None:
    """`name` was called (with `args`, a subset match), at least once or exactly `times`."""
    found = matching(uses, name, args)
    if (times is None and found) or len(found) == times:
        return None
    what = name + (f" with {_compact(args)}" if args else "")
    count = "at least once" if times is None else _times(times)
    headline = (
        f"{what} was never called"
        if not found
        else f"{what} was called {_times(len(found))}, expected {count}"
    )
    return Failure(headline, f"{what} called {count}", _made(uses))


def tool_fed_back(
    uses: Sequence[Mapping[str, Any]],
    name: str,
    args: Mapping[str, Any] | None = None,
    times: int | None = None,
) -> Failure | None:
    """The model asked for `name` (with `args`), and the harness ran it and sent a result
    back, by the call's id, in a later request: every such call, at least once or exactly
    `times`. (mockllm sees the result come back, not the tool run: a scripted MCP tool's
    run is `tool_executed`'s.)"""
    found = matching(uses, name, args)
    fed = [u for u in found if u["result"] is not None]
    missing = [u for u in found if u["result"] is None]
    count = "at least once" if times is None else _times(times)
    what = name + (f" with {_compact(args)}" if args else "")
    expected = f"{what} asked for by the model, run and its result sent back {count}"
    if not found:
        return Failure(
            f"the model never asked for {what}, so no result of it was sent back",
            expected,
            _made(uses),
        )
    if missing:
        ids = ", ".join(f"{u['id']} (turn {u['turn']})" for u in missing)
        return Failure(
            f"the model asked for {what} {_times(len(found))}, but no result came back "
            f"for {ids}: the harness did not run it, or did not send its result",
            expected,
            _made(uses),
        )
    if times is not None and len(fed) != times:
        return Failure(
            f"{what} was run and its result sent back {_times(len(fed))}, expected {count}",
            expected,
            _made(uses),
        )
    return None


def called_before(uses: Sequence[Mapping[str, Any]], first: str, then: str) -> Failure | None:
    """The first call of `first` had its result sent back before the model made the
    first call of `then`: `then` was decided knowing what `first` returned."""
    a = next((u for u in uses if u["name"] == first), None)
    b = next((u for u in uses if u["name"] == then), None)
    expected = f"{first} called, and its result sent back, before {then} was called"
    if a is None or b is None:
        missing = " and ".join(n for n, u in ((first, a), (then, b)) if u is None)
        return Failure(f"{missing} never called", expected, _made(uses))
    if a["answered_in"] is not None and a["answered_in"] <= b["seq"]:
        return None
    if a["seq"] > b["seq"]:
        why = f"{then} ({b['id']}) was called at turn {b['turn']}, {first} only at turn {a['turn']}"
    elif a["answered_in"] is None:
        why = f"{first} ({a['id']}) never got a result, so {then} could not have seen it"
    else:
        why = (
            f"{then} ({b['id']}) was called in the same reply as {first} ({a['id']}), before "
            f"its result came back (request (log seq {a['answered_in']}))"
        )
    return Failure(f"{then} was called before {first} returned", expected, [why, *_made(uses)])


def result_reached_model(
    uses: Sequence[Mapping[str, Any]],
    entries: Iterable[EntryJson],
    call_id: str,
    content: str | None = None,
    is_error: bool | None = None,
) -> Failure | None:
    """The result the harness's tool produced for `call_id` reached the model unchanged:
    a later request carried a result with that id, its text equal to `content` (or equal
    as JSON when both parse), flagged `is_error` if given, and every request after it
    kept it in the history (a harness that drops or rewrites it fails)."""
    use = next((u for u in uses if u["id"] == call_id), None)
    label = f"{use['name']} ({call_id})" if use else call_id
    expected = f"the result of {label}" + (f" is {_short(content)}" if content is not None else "")
    expected += " and stays in every later request's history"
    if use is None:
        known = ", ".join(u["id"] for u in uses) or "none"
        return Failure(
            f"no tool call {call_id} in this session", expected, [f"calls made: {known}"]
        )
    if use["result"] is None:
        return Failure(
            f"the result of {label} never reached the model",
            expected,
            [f"no request after log seq {use['seq']} carried a result for {call_id}"],
        )
    got = use["result"]
    problems = []
    if content is not None and not _same(got["content"], content):
        problems.append(
            f"request (log seq {use['answered_in']}) carried {_short(got['content'])}, "
            f"not {_short(content)}"
        )
    if is_error is not None and bool(got["is_error"]) != is_error:
        problems.append(
            f"request (log seq {use['answered_in']}) flagged is_error={got['is_error']}, "
            f"not {is_error}"
        )
    for e in sorted(entries, key=lambda e: int(e["seq"])):
        if int(e["seq"]) > use["answered_in"] and e.get("conversation") is not None:
            kept = [r for r in _results(e) if r["call_id"] == call_id]
            if not kept:
                problems.append(f"request (log seq {e['seq']}) dropped the result from its history")
                break
            if kept[0].get("content") != got["content"]:
                problems.append(
                    f"request (log seq {e['seq']}) rewrote it to "
                    f"{_short(kept[0].get('content', ''))}"
                )
                break
    if not problems:
        return None
    return Failure(f"the result of {label} did not reach the model unchanged", expected, problems)


# `tool_called` is `tool_requested`'s old name (the Node client's deprecated assertToolCalled).
CHECKS = (
    "tool_requested",
    "tool_fed_back",
    "tool_called",
    "called_before",
    "result_reached_model",
)


def run_check(entries: Sequence[EntryJson], spec: Mapping[str, Any]) -> Failure | None:
    """One check as the server's `POST /_mockllm/check` takes it: `{check, ...its
    arguments}`. Raises ValueError naming what is wrong with `spec`."""
    uses = tool_uses(entries)
    check = spec.get("check")
    if check in ("tool_requested", "tool_called", "tool_fed_back"):
        times = spec.get("times")
        if times is not None and (
            not isinstance(times, int) or isinstance(times, bool) or times < 0
        ):
            raise ValueError("times must be a whole number >= 0")
        judge = tool_fed_back if check == "tool_fed_back" else tool_called
        return judge(uses, _text(spec, "name"), _mapping(spec.get("args")), times)
    if check == "called_before":
        return called_before(uses, _text(spec, "first"), _text(spec, "then"))
    if check == "result_reached_model":
        content = spec.get("content")
        if content is not None and not isinstance(content, str):
            content = json.dumps(content)
        is_error = spec.get("is_error")
        if is_error is not None and not isinstance(is_error, bool):
            raise ValueError("is_error must be true or false")
        return result_reached_model(uses, entries, _text(spec, "call_id"), content, is_error)
    raise ValueError(f"check must be one of {', '.join(CHECKS)}, not {check!r}")


def _text(spec: Mapping[str, Any], key: str) -> str:
    value = spec.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{key} must be a non-empty string")
    return value


def _mapping(value: Any) -> Mapping[str, Any] | None:
    if value is not None and not isinstance(value, Mapping):
        raise ValueError("args must be an object")
    return value


def _results(entry: EntryJson) -> Iterable[Mapping[str, Any]]:
    for m in entry.get("conversation") or ():
        yield from m.get("tool_results", ())


def _parse(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return None


def _holds(got: Any, wanted: Mapping[str, Any] | None) -> bool:
    if not wanted:
        return True
    return isinstance(got, Mapping) and all(k in got and got[k] == v for k, v in wanted.items())


def _same(got: str, wanted: str) -> bool:
    if got == wanted:
        return True
    a, b = _parse(got), _parse(wanted)
    return a is not None and b is not None and a == b


def _made(uses: Sequence[Mapping[str, Any]]) -> list[str]:
    if not uses:
        return ["the model made no tool call"]
    return [_line(u) for u in uses]


def _line(use: Mapping[str, Any]) -> str:
    result = use["result"]
    answer = "no result" if result is None else f"result {_short(result['content'])}"
    flag = " (is_error)" if result and result.get("is_error") else ""
    return (
        f"{use['name']}({_plain(use['arguments'])}) id={use['id']}, turn {use['turn']} "
        f"(request (log seq {use['seq']})) → {answer}{flag}"
    )


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _short(text: str | None) -> str:
    text = "" if text is None else str(text).replace("\n", "\\n")
    return repr(text if len(text) <= _SHORT else text[: _SHORT - 1] + "…")


def _plain(text: str) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= _SHORT else text[: _SHORT - 1] + "…"
