"""The Node client (clients/node): its own suite under the Node test runner, the vitest
example project, and the same transcript as the Python client for the same session."""

from __future__ import annotations

import json
import re

import openai
import pytest

from mockllm import Client, Session
from tests.e2e.docs.test_readme import claimed_output
from tests.support import (
    ROOT,
    TOOL_PARAMETERS,
    ServerProcess,
    node_test_counts,
    run_node,
    run_node_snippet,
    run_node_tests,
)

CLIENT = ROOT / "clients" / "node"


def test_node_client_suite_passes() -> None:
    output = run_node_tests(CLIENT, "node", "--test", "--test-reporter=tap", "test/")
    passed, failed = node_test_counts(output)
    assert failed == 0 and passed >= 13, output


def test_vitest_example_project_passes() -> None:
    example = CLIENT / "examples" / "vitest"
    output = run_node_tests(example, "node", "node_modules/vitest/vitest.mjs", "run")
    assert "3 passed" in output, output


def one_result_short(server: ServerProcess, session: str) -> Session:
    """Two parallel calls, one result sent back: the provider's 400, a session to judge."""
    tools = [
        {"type": "function", "function": {"name": "get_weather", "parameters": TOOL_PARAMETERS}}
    ]
    mock = Client(server.url).session(session)
    with openai.OpenAI(base_url=mock.url("weather-parallel"), api_key="t", max_retries=0) as sdk:
        messages: list[object] = [{"role": "user", "content": "北京和上海?"}]
        reply = sdk.chat.completions.create(model="m", messages=messages, tools=tools)
        messages.append(reply.choices[0].message.model_dump(exclude_unset=True))
        calls = reply.choices[0].message.tool_calls or []
        messages += [{"role": "tool", "tool_call_id": c.id, "content": "25度"} for c in calls[:1]]
        with pytest.raises(openai.BadRequestError):
            sdk.chat.completions.create(model="m", messages=messages, tools=tools)
    return mock


def test_the_transcript_is_the_same_text_as_pythons(server: ServerProcess, session: str) -> None:
    mock = one_result_short(server, session)
    script = (
        "import { Client } from 'mockllm';"
        f"console.log(await new Client({json.dumps(server.url)}).transcript({json.dumps(session)}));"
    )
    done = run_node(CLIENT, "node", "--input-type=module", "-e", script)
    assert done.returncode == 0, done.stderr
    expected = mock.transcript()
    assert "← error 400" in expected and "! " in expected  # the refusal and its rule are shown
    assert done.stdout == expected + "\n"


NODE_DIR = ROOT / "tests" / "node"  # has the SDKs and the client installed


def node_doc_blocks(pattern: str) -> list[str]:
    return re.findall(pattern, (ROOT / "docs" / "node.md").read_text(), re.S)


def test_docs_node_quick_start_passes_under_the_node_test_runner() -> None:
    [code] = node_doc_blocks(r"```js file=\S+\n(.*?)```")
    done = run_node_snippet(
        NODE_DIR, code, "node", "--test", "--test-reporter=tap", suffix=".test.mjs"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert node_test_counts(done.stdout) == (1, 0), done.stdout


def test_docs_node_script_prints_what_it_claims() -> None:
    [code] = node_doc_blocks(r"```js\n(.*?)```")
    done = run_node_snippet(NODE_DIR, code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == claimed_output(code, "//")


def test_the_gemini_url_is_one_the_node_gemini_sdk_works_with(
    server: ServerProcess, session: str
) -> None:
    script = f"""
import {{ GoogleGenAI }} from "@google/genai";
import {{ Client }} from "mockllm";
const mock = new Client({json.dumps(server.url)}).session({json.dumps(session)});
const ai = new GoogleGenAI({{ apiKey: "t", httpOptions: {{ baseUrl: mock.url("hello", {{ api: "gemini" }}) }} }});
const reply = await ai.models.generateContent({{ model: "gemini-2.5-flash", contents: "hi" }});
let streamed = "";
for await (const chunk of await ai.models.generateContentStream({{ model: "gemini-2.5-flash", contents: "hi" }})) {{
  streamed += chunk.text ?? "";
}}
console.log(JSON.stringify([reply.text, streamed]));
"""
    done = run_node_snippet(ROOT / "tests" / "node", script)
    assert done.returncode == 0, done.stdout + done.stderr
    whole, streamed = json.loads(done.stdout)
    assert whole.startswith("Hello! I am mockllm") and streamed == whole
    entries = Client(server.url).requests(session=session)
    assert [(e.api, e.scenario, e.path.split(":")[-1]) for e in entries] == [
        ("gemini", "hello", "generateContent"),
        ("gemini", "hello", "streamGenerateContent"),
    ]


def test_a_failing_assertion_reads_the_same_words_as_pythons(
    server: ServerProcess, session: str
) -> None:
    mock = one_result_short(server, session)
    python = {}
    for name, check in {
        "assertAllToolCallsAnswered()": mock.assert_all_tool_calls_answered,
        "assertModelCalls({ atMost: 1 })": lambda: mock.assert_model_calls(at_most=1),
        "assertCleanVerdict()": mock.assert_clean_verdict,
        'assertToolExecuted("lookup")': lambda: mock.assert_tool_executed("lookup"),
        "assertMcpLoopClosed()": mock.assert_mcp_loop_closed,
    }.items():
        with pytest.raises(AssertionError) as failed:
            check()
        python[name] = str(failed.value)
    script = (
        "import { Client } from 'mockllm';"
        f"const s = new Client({json.dumps(server.url)}).session({json.dumps(session)});"
        "const out = {};"
        + "".join(
            f"try {{ await s.{call}; }} catch (e) {{ out[{json.dumps(call)}] = e.message; }}"
            for call in python
        )
        + "console.log(JSON.stringify(out));"
    )
    done = run_node(CLIENT, "node", "--input-type=module", "-e", script)
    assert done.returncode == 0, done.stderr
    node = json.loads(done.stdout)
    assert "mockllm: 1 tool call never got a result" in node["assertAllToolCallsAnswered()"]
    assert node == python
