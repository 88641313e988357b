"""The Node client's assertions on what the agent did (docs/node.md): the documented test
passes under the Node test runner with the official OpenAI SDK; the same agent with a
planted bug fails with the very words the Python client uses (the server's check)."""

from __future__ import annotations

import re

from tests.support import ROOT, ServerProcess, node_test_counts, run_node_snippet

NODE_DIR = ROOT / "tests" / "node"  # has the SDKs and the client installed
[DOC_TEST] = re.findall(r"```js test=\S+\n(.*?)```", (ROOT / "docs" / "node.md").read_text(), re.S)


def run(code: str) -> tuple[int, int, str]:
    done = run_node_snippet(
        NODE_DIR, code, "node", "--test", "--test-reporter=tap", suffix=".test.mjs"
    )
    output = done.stdout + done.stderr
    return (*node_test_counts(done.stdout), output)


def test_the_documented_node_test_passes() -> None:
    passed, failed, output = run(DOC_TEST)
    assert (passed, failed) == (1, 0), output


def test_a_result_cut_short_fails_with_the_pythons_words() -> None:
    wrong = DOC_TEST.replace(
        'messages.push({ role: "tool", tool_call_id: call.id, content });',
        'messages.push({ role: "tool", tool_call_id: call.id, content: content.slice(0, 20) });',
    )
    assert wrong != DOC_TEST
    passed, failed, output = run(wrong)
    assert (passed, failed) == (0, 1), output
    assert re.search(
        r"mockllm: the result of refund \(call_\w+\) did not reach the model unchanged", output
    ), output
    assert re.search(
        r"- request \(log seq \d+\) carried 'refund R-A2024 of 30', not 'refund R-A2024 of 30 EUR issued'",
        output,
    ), output


def test_other_arguments_fail_assert_tool_result_fed_back_and_the_calls_route_filters(
    server: ServerProcess, session: str
) -> None:
    wrong = DOC_TEST.replace(
        "arguments: {order_id: A2024, amount: 30}", "arguments: {order_id: A2025, amount: 30}"
    )
    passed, failed, output = run(wrong)
    assert (passed, failed) == (0, 1), output
    assert re.search(
        r'mockllm: the model never asked for refund with \{\\?"order_id\\?":\\?"A2024\\?"\}, so '
        "no result of it was sent back",
        output,
    ), output
    # The route the Node client reads refuses arguments that are not an object.
    answer = server.http.get(
        "/_mockllm/calls", params={"session": session, "name": "x", "args": "[1]"}
    )
    assert (
        answer.status_code == 400
        and "args must be a JSON object" in answer.json()["error"]["message"]
    )


def test_a_node_allowance_shows_as_waived_in_the_verdict_and_the_transcript(
    server: ServerProcess, session: str
) -> None:
    script = f"""
import {{ Client }} from "mockllm";
const session = new Client({server.url!r}).session({session!r});
const url = session.url("weather-single");
const tools = [{{ type: "function", function: {{ name: "get_weather", parameters: {{ type: "object", properties: {{}} }} }} }}];
await fetch(url + "/chat/completions", {{ method: "POST", headers: {{ "content-type": "application/json" }},
  body: JSON.stringify({{ model: "m", messages: [{{ role: "user", content: "Weather?" }}], tools }}) }});
console.log((await session.verdict()).label);
await session.allow({{ calls_answered: "the agent stops at max_steps" }});
const verdict = await session.verdict();
console.log(verdict.label);
console.log(verdict.checks.filter((c) => c.status === "waived").map((c) => c.name + ": " + c.waived).join());
await session.assertCleanVerdict();
console.log((await session.transcript()).split("\\n").at(-1).slice(0, 60));
"""
    done = run_node_snippet(NODE_DIR, script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "✗ verdict: FAIL",
        "✓ verdict: pass (1 waived)",
        "calls_answered: the agent stops at max_steps",
        "     ~ calls_answered waived: the agent stops at max_steps [",
    ]


def test_node_tells_a_tool_requested_from_a_tool_run_and_its_result_fed_back(
    server: ServerProcess, session: str
) -> None:
    """The agent asks, gets the call, and never runs the tool: requested, not fed back."""
    script = f"""
import {{ Client }} from "mockllm";
const session = new Client({server.url!r}).session({session!r});
await session.reset();
const url = session.url("weather-single");
const tools = [{{ type: "function", function: {{ name: "get_weather", parameters: {{ type: "object", properties: {{}} }} }} }}];
await fetch(url + "/chat/completions", {{ method: "POST", headers: {{ "content-type": "application/json" }},
  body: JSON.stringify({{ model: "m", messages: [{{ role: "user", content: "Weather?" }}], tools }}) }});
console.log((await session.assertToolRequested("get_weather", {{ times: 1 }})).length);
console.log((await session.assertToolCalled("get_weather")).length);
for (const check of [() => session.assertToolResultFedBack("get_weather"), () => session.assertAllTurnsServed()]) {{
  try {{ await check(); console.log("passed"); }} catch (e) {{ console.log(e.message.split("\\n")[0]); }}
}}
"""
    done = run_node_snippet(NODE_DIR, script)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["1", "1"]
    assert re.fullmatch(
        r"mockllm: the model asked for get_weather once, but no result came back for call_\w+ "
        r"\(turn 0\): the harness did not run it, or did not send its result",
        lines[2],
    ), lines
    assert lines[3] == "mockllm: 1 scenario with scripted turns never served", lines
