"""The pytest plugin, run the way users run it: test files executed by pytester."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mockllm
from tests.support.viewer_data import embedded

pytest_plugins = ["pytester"]

CHAT = """
import httpx

def chat(url, *messages, tools=()):
    tools = [{"type": "function", "function": {"name": t, "parameters": {"type": "object", "properties": {}}}}
             for t in tools]
    body = {"model": "m", "messages": list(messages), **({"tools": tools} if tools else {})}
    reply = httpx.post(url + "/chat/completions", json=body)
    return reply.status_code, reply.json()

def user(text):
    return {"role": "user", "content": text}
"""

PARALLEL = """
import os, pathlib, pytest
from chat import chat, user

@pytest.mark.parametrize("i", range(20))
def test_sees_only_its_own_requests(mockllm, mockllm_client, i):
    sent = [f"test {i} request {k}" for k in range(i % 3 + 1)]
    for text in sent:
        assert chat(mockllm.url("hello"), user(text))[0] == 200
    assert [e.conversation[-1].text for e in mockllm.requests()] == sent
    mockllm.assert_model_calls(exactly=len(sent))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    pathlib.Path(f"servers/{i}").write_text(f"{worker} {mockllm_client.base_url}")

def test_a_wrong_assertion_shows_the_conversation(mockllm):
    url = mockllm.url("weather-single")
    _, reply = chat(url, user("Weather in Paris?"), tools=["get_weather"])
    assistant = reply["choices"][0]["message"]
    call_id = assistant["tool_calls"][0]["id"]
    result = {"role": "tool", "tool_call_id": call_id, "content": "18 °C"}
    chat(url, user("Weather in Paris?"), assistant, result, tools=["get_weather"])
    mockllm.assert_model_calls(exactly=1)
"""


def test_parallel_workers_each_run_a_server_and_tests_see_only_their_own_requests(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(chat=CHAT, test_parallel=PARALLEL)
    (pytester.path / "servers").mkdir()
    result = pytester.runpytest_subprocess(
        "-n", "4", "-p", "no:cacheprovider", "--mockllm-html=out/report.html", timeout=120
    )
    result.assert_outcomes(passed=20, failed=1)
    result.stdout.fnmatch_lines(
        [
            ">       mockllm.assert_model_calls(exactly=1)",
            "E       AssertionError: mockllm: 2 model requests, expected exactly 1",
            "E       mockllm session 'test_a_wrong_assertion_shows_the_conversation-*', 2 model requests:",
            "E         request 1 (log seq *) · turn 0 · openai-chat · scenario weather-single · tools offered: get_weather",
            "E              user: Weather in Paris?",
            "E            ← assistant (200, tool_calls)",
            'E              calls get_weather({"city":"Paris"}) id=call_*',
            "E         request 2 (log seq *) · turn 1 · *",
            "E              tool result for call_*: 18 °C",
            "E            ← assistant (200, stop): It is 18 °C and sunny in Paris.",
            "E       expected: exactly 1 model request(s)",
            "E       happened:",
            "E         - 2 model requests made",
        ]
    )
    servers = [p.read_text().split() for p in (pytester.path / "servers").iterdir()]
    by_worker = {worker: {url for w, url in servers if w == worker} for worker, _ in servers}
    assert len(by_worker) == 4, "four workers ran the tests"
    assert all(len(urls) == 1 for urls in by_worker.values()), "one server per worker"
    assert len({url for _, url in servers}) == 4
    # --mockllm-html: each worker's tests and requests reach the one report, failing first
    data = embedded((pytester.path / "out" / "report.html").read_text("utf-8"))
    tests = data["tests"]
    assert len(tests) == 21 and tests[0]["outcome"] == "failed"
    assert tests[0]["test"] == "test_parallel.py::test_a_wrong_assertion_shows_the_conversation"
    assert "2 model requests, expected exactly 1" in tests[0]["message"]
    assert {t["outcome"] for t in tests[1:]} == {"passed"}
    passed = [t["test"] for t in tests[1:]]
    assert passed == sorted(passed)  # not the order the workers finished in
    assert len(data["entries"]) == 2 + sum(i % 3 + 1 for i in range(20))
    assert {e["session"] for e in data["entries"]} == {t["session"] for t in tests}


CRASH = """
from chat import chat, user

def explode(*args, **kwargs):
    raise RuntimeError("the engine exploded")

def test_crashes_the_server(mockllm, mockllm_server, monkeypatch):
    # both of the engine's ways to answer: a plain scenario's usual request takes `plain`
    monkeypatch.setattr(mockllm_server.app.engine, "answer", explode)
    monkeypatch.setattr(mockllm_server.app.engine, "plain", explode)
    status, body = chat(mockllm.url("hello"), user("hi"))
    assert status == 500  # the test itself passes: a client that swallows 500s hides it

def test_a_later_test_is_not_blamed(mockllm):
    assert chat(mockllm.url("hello"), user("hi"))[0] == 200
"""


def test_a_server_exception_fails_the_test_at_teardown_with_the_traceback(
    pytester: pytest.Pytester,
) -> None:
    # mockllm has no way to fail on purpose (nor should it have): the test reaches into
    # its in-process server, as a user could, and makes the engine raise.
    pytester.makepyfile(chat=CHAT, test_crash=CRASH)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_crashes_the_server*",
            "mockllm: the server raised an exception while answering 1 request of this test:",
            "log seq *: /s/hello/test_crashes_the_server-*/v1/chat/completions (openai-chat, turn ?)",
            "Traceback (most recent call last):",
            '*File "*mockllm/serving/exchange.py", line *, in handle',
            "*RuntimeError: the engine exploded",
        ]
    )


OPTIONS = """
import pytest
from chat import chat, user

def said(url):
    return chat(url, user("hi"))[1]["choices"][0]["message"]["content"]

def test_startup_scenarios_besides_the_bundled_ones(mockllm):
    assert said(mockllm.url("from-ini")) == "ini"
    assert said(mockllm.url("from-flag")) == "flag"
    assert said(mockllm.url("from-second-flag")) == "second"
    assert said(mockllm.url("hello")).startswith("Hello!")

MAPPED = {"name": "mapped", "turns": [{"reply": {"text": "mapping"}}]}

@pytest.mark.mockllm("data/marked.yaml")
class TestMarked:
    @pytest.mark.mockllm(scenarios=["name: texted\\nturns: [{reply: {text: text}}]\\n", MAPPED])
    def test_marker_scenarios(self, mockllm):
        assert said(mockllm.url("marked")) == "file"
        assert said(mockllm.url("texted")) == "text"
        assert said(mockllm.url("mapped")) == "mapping"

@pytest.mark.mockllm(scenarios="data/broken.yaml")
def test_a_broken_marker_scenario_is_located(mockllm):
    pass
"""


def _scenario(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"turns: [{{reply: {{text: {text}}}}}]\n")


def test_ini_option_flag_and_marker_add_scenarios(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(chat=CHAT, test_options=OPTIONS)
    pytester.makeini("[pytest]\nmockllm_scenarios = ini-scenarios\n")
    _scenario(pytester.path / "ini-scenarios" / "from-ini.yaml", "ini")
    _scenario(pytester.path / "elsewhere" / "from-flag.yml", "flag")
    _scenario(pytester.path / "data" / "marked.yaml", "file")
    (pytester.path / "data" / "broken.yaml").write_text("turns: [{reply: {txt: x}}]\n")
    _scenario(pytester.path / "more" / "from-second-flag.yaml", "second")
    result = pytester.runpytest(
        "--strict-markers",
        "-p",
        "no:cacheprovider",
        "--mockllm-scenarios",
        "elsewhere",
        "--mockllm-scenarios",
        "more/from-second-flag.yaml",
        "test_options.py",  # after the flag, and still a test path
    )
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_a_broken_marker_scenario_is_located*",
            "mockllm: a scenario of @pytest.mark.mockllm is wrong:",
            "data/broken.yaml:1:18: turns[[]0[]].reply.txt: unknown key 'txt'*",
        ]
    )


def test_a_broken_startup_scenario_fails_the_tests_that_use_the_server(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile("def test_uses(mockllm): pass\ndef test_does_not(): pass\n")
    (pytester.path / "broken.yaml").write_text("turns: [{reply: {text: x, finsh: stop}}]\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--mockllm-scenarios", "broken.yaml")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["mockllm: cannot start the server:", "*broken.yaml:1:27: turns[[]0[]].reply.finsh: *"]
    )


def test_mockllm_url_uses_a_server_started_elsewhere(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        chat=CHAT,
        test_remote="""
            from chat import chat, user

            def test_remote(mockllm):
                assert chat(mockllm.url("remote-only"), user("hi"))[0] == 200
        """,
    )
    _scenario(pytester.path / "extra" / "remote-only.yaml", "remote")
    with mockllm.serve() as server:
        result = pytester.runpytest(
            "-p", "no:cacheprovider", "--mockllm-url", server.url, "--mockllm-scenarios", "extra"
        )
        result.assert_outcomes(passed=1)
        (entry,) = server.client.requests(scenario="remote-only")
    assert entry.session is not None and entry.session.startswith("test_remote-")
    assert json.loads(entry.response.body)["choices"][0]["message"]["content"] == "remote"


ORPHAN_RESULT = """
import pytest
from chat import chat, user

@pytest.mark.mockllm(strict=False)  # the request is wrong on purpose: only its status counts
def test_an_orphan_tool_result(mockllm):
    orphan = {"role": "tool", "tool_call_id": "call_nope", "content": "18 °C"}
    status, body = chat(mockllm.url("hello"), user("hi"), orphan)
    print("STATUS", status)
"""


@pytest.mark.parametrize(
    ("setting", "status"),
    [
        ({}, 400),  # strict by default: the provider's 400 for a result with no call
        ({"ini": "[pytest]\nmockllm_validation = warn\n"}, 200),
        (
            {
                "conftest": "import pytest\nfrom mockllm import ServerOptions\n\n"
                "@pytest.fixture(scope='session')\n"
                "def mockllm_server_options():\n"
                "    return ServerOptions(validation='off')\n"
            },
            200,
        ),
    ],
    ids=["default", "ini", "fixture"],
)
def test_server_options_for_the_test_run(
    pytester: pytest.Pytester, setting: dict[str, str], status: int
) -> None:
    pytester.makepyfile(chat=CHAT, test_orphan=ORPHAN_RESULT)
    if "ini" in setting:
        pytester.makeini(setting["ini"])
    if "conftest" in setting:
        pytester.makeconftest(setting["conftest"])
    result = pytester.runpytest("-p", "no:cacheprovider", "-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"*STATUS {status}"])


def test_a_wrong_validation_setting_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(chat=CHAT, test_orphan=ORPHAN_RESULT)
    pytester.makeini("[pytest]\nmockllm_validation = lenient\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*mockllm_validation: 'lenient' is not strict, warn or off*"])
