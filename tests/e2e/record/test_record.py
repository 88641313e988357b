"""`mockllm record` end to end: a real upstream on loopback (a mockllm server playing the API,
every bundled failure scenario as the model), a real recorder process in between, the
official SDKs as clients; then the recorded file served by mockllm and the same client code
run again, which must see the same thing."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from mockllm import load_paths
from mockllm.core.scenario import HttpFault, Scenario, Truncate
from mockllm.testing.client import Client
from tests.e2e.admin.test_cli import mockllm as mockllm_cli
from tests.support import BUNDLED, TOOL_PARAMETERS, ServerProcess, running_command, running_server
from tests.support.drivers import DRIVERS, Driver, View, Walker

# doubao-stream-error is Ark's error envelope: a recording keeps the error's words, not the
# provider flavour that shaped them (docs/record.md; `mockllm record` writes `flavor:` only
# for DeepSeek's reasoning), so its replay answers in OpenAI's envelope. So does
# azure-content-filter's: the recorded `http` fault keeps the filter's words, not its
# `param`, `status` and `innererror` (docs/azure.md).
UNRECORDABLE = ("doubao-stream-error", "azure-content-filter")
SCENARIOS = sorted(
    (s for s in load_paths([BUNDLED]) if s.name not in UNRECORDABLE), key=lambda s: s.name
)
SECRET_KEY = "sk-proj-Zq81secretKEYvalue0001"
TOOLS: list[Any] = [
    {"type": "function", "function": {"name": "get_weather", "parameters": TOOL_PARAMETERS}}
]


@dataclass
class Recorder:
    server: ServerProcess  # the recorder, reachable like a server by the drivers
    out: Path

    def end(self, name: str) -> Path:
        """End a session: its exchanges in flight are finished, its file complete."""
        r = self.server.http.post("/_mockllm/record/end", params={"name": name})
        r.raise_for_status()
        return Path(r.json()["path"])


@pytest.fixture(scope="module")
def recorder(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorder]:
    out = tmp_path_factory.mktemp("recordings")
    upstream = f"{server.url}/s/{{scenario}}/{{session}}"
    with running_command("record", "--upstream", upstream, "--out", str(out)) as process:
        yield Recorder(process, out)


@pytest.fixture(scope="module")
def replay() -> Iterator[ServerProcess]:
    """A plain `mockllm serve` (validation strict) that recorded files are added to."""
    with running_server(scenarios=()) as s:
        yield s


# --- what a client sees ------------------------------------------------------------------


def outcome(driver: Driver, request: dict[str, Any], streamed: bool) -> tuple[Any, View | None]:
    """What one attempt gave the client: the reply's content, or the error it raised."""
    try:
        view = driver.stream(request) if streamed else driver.create(request)
    except Exception as e:  # every failure is compared, whatever its class
        return _error(e), None
    calls = [(name, arguments) for _, name, arguments in view.calls]
    return ("reply", view.text, view.reasoning, calls, view.finish), view


def _error(e: Exception) -> tuple[Any, ...]:
    response = getattr(e, "response", None)
    if isinstance(e, (openai.APIStatusError, anthropic.APIStatusError)):
        headers = {k: response.headers.get(k) for k in ("retry-after", "retry-after-ms")}
        body = e.body.get("error", e.body) if isinstance(e.body, dict) else e.body
        return ("error", type(e).__name__, e.status_code, body, headers)
    if isinstance(e, (openai.APIError, anthropic.APIError)) and not isinstance(
        e, (openai.APIConnectionError, anthropic.APIConnectionError)
    ):
        return ("error", type(e).__name__, e.message)
    return ("error", type(e).__name__)  # connection errors, a body that does not parse


def walk(driver: Driver, guide: Scenario, streamed: bool) -> list[Any]:
    """Play `guide`'s turns as the test harness does (SDK retries off): the attempts a
    fault spoils, then the one that is served; the outcome of each, in order."""
    walker = Walker(guide, driver)
    seen = []
    for turn in guide.turns:
        request = walker.request()
        fault = turn.fault
        spoiled = 0 if fault is None or fault.kind == "delay" else fault.times or 1
        extra = {"timeout": 0.5} if fault is not None and fault.kind == "stall" else {}
        for _ in range(spoiled):
            seen.append(outcome(driver, {**request, **extra}, streamed)[0])
        if spoiled and fault is not None and fault.times is None:
            break  # every attempt gets the fault
        result, view = outcome(driver, request, streamed)
        seen.append(result)
        if view is None:
            break
        walker.advance(view)
    return seen


# --- the proof ----------------------------------------------------------------------------


RECORDABLE = sorted(DRIVERS)  # every wire mockllm serves


@pytest.mark.parametrize("streamed", [False, True], ids=["create", "stream"])
@pytest.mark.parametrize("api", RECORDABLE)
@pytest.mark.parametrize("guide", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_a_recorded_session_replays_as_it_happened(
    server: ServerProcess,
    recorder: Recorder,
    replay: ServerProcess,
    session: str,
    api: str,
    guide: Scenario,
    streamed: bool,
) -> None:
    """Directly against the upstream, through the recorder, and from the recorded file:
    the same client code sees the same replies and the same errors, attempt by attempt."""
    direct = play(server, guide.name, f"{session}-direct", api, guide, streamed)
    recorded = play(recorder.server, guide.name, session, api, guide, streamed)
    assert recorded == direct  # the recorder is transparent
    path = recorder.end(f"{guide.name}-{session}")
    (scenario,) = load_paths([path])  # schema-valid and checked, like any scenario file
    Client(replay.url).add_scenario(path)
    assert play(replay, scenario.name, session, api, guide, streamed) == recorded


def play(
    server: ServerProcess, scenario: str, session: str, api: str, guide: Scenario, streamed: bool
) -> list[Any]:
    driver = DRIVERS[api](server, scenario, session)
    try:
        return walk(driver, guide, streamed)
    finally:
        driver.close()


# --- what the file says --------------------------------------------------------------------


def record(
    recorder: Recorder, guide: str, session: str, api: str = "chat", streamed: bool = False
) -> Scenario:
    """Walk a bundled scenario through the recorder; the scenario it wrote."""
    scenario = next(s for s in SCENARIOS if s.name == guide)
    play(recorder.server, guide, session, api, scenario, streamed)
    (recorded,) = load_paths([recorder.end(f"{guide}-{session}")])
    return recorded


def test_a_429_is_recorded_with_its_retry_headers_and_the_attempts_it_spoiled(
    recorder: Recorder, session: str
) -> None:
    turn = record(recorder, "rate-limited", session).turns[0]
    assert turn.fault is not None and isinstance(http := turn.fault.part, HttpFault)
    assert (http.status, turn.fault.times) == (429, 2)
    assert http.headers == (("retry-after-ms", "20"),)
    assert http.code == "rate_limit_exceeded"
    assert [c.name for c in turn.reply.tool_calls] == ["get_weather"]  # the third attempt's


def test_a_recorded_429_replays_as_a_429_with_the_same_retry_after(
    recorder: Recorder, replay: ServerProcess, session: str
) -> None:
    recorded = record(recorder, "rate-limited", session)
    Client(replay.url).add_scenario(recorded.source)
    client = openai.OpenAI(
        base_url=replay.openai_url(recorded.name, session), api_key="test", max_retries=0
    )
    with pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], tools=TOOLS
        )
    assert caught.value.response.headers["retry-after-ms"] == "20"
    client.close()


def partial_arguments(client: openai.OpenAI) -> tuple[str, type[Exception] | None]:
    """The arguments a streamed Chat call delivered before the stream broke, and how it broke."""
    arguments = ""
    try:
        stream = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "hi"}],
            tools=TOOLS,
            stream=True,
        )
        for chunk in stream:
            for call in chunk.choices[0].delta.tool_calls or () if chunk.choices else ():
                arguments += call.function.arguments or ""
    except openai.APIConnectionError as e:
        return arguments, type(e)
    return arguments, None


@pytest.mark.parametrize("guide", ["stream-cut", "stream-ends-early"])
def test_a_recorded_cut_stream_replays_cut_at_the_same_content(
    server: ServerProcess, recorder: Recorder, replay: ServerProcess, session: str, guide: str
) -> None:
    upstream = openai.OpenAI(
        base_url=server.openai_url(guide, f"{session}-direct"), api_key="test", max_retries=0
    )
    direct = partial_arguments(upstream)
    recorded = record(recorder, guide, session, streamed=True)
    fault = recorded.turns[0].fault
    assert fault is not None and isinstance(cut := fault.part, Truncate) and fault.times == 1
    assert cut.disconnect == ("reset" if guide == "stream-cut" else "close")
    Client(replay.url).add_scenario(recorded.source)
    client = openai.OpenAI(
        base_url=replay.openai_url(recorded.name, session), api_key="test", max_retries=0
    )
    replayed = partial_arguments(client)
    assert replayed == direct and replayed[0] == '{"city":"Pa'  # cut inside the arguments
    assert (replayed[1] is None) == (guide == "stream-ends-early")
    assert partial_arguments(client) == ('{"city":"Paris","unit":"celsius"}', None)  # times: 1
    upstream.close()
    client.close()


def test_a_responses_chain_by_previous_response_id_is_recorded(
    recorder: Recorder, replay: ServerProcess, session: str
) -> None:
    """The client sends only the new items and the id of the response before; the recorder
    knows that id (the upstream's) and so the turn."""

    def converse(client: openai.OpenAI) -> list[str]:
        tool = {
            "type": "function",
            "name": "get_weather",
            "parameters": TOOLS[0]["function"]["parameters"],
        }
        first = client.responses.create(model="gpt-4.1", input="hi", tools=[tool])
        call = next(i for i in first.output if i.type == "function_call")
        result = {"type": "function_call_output", "call_id": call.call_id, "output": "18 °C"}
        second = client.responses.create(
            model="gpt-4.1", input=[result], previous_response_id=first.id, tools=[tool]
        )
        return [call.arguments, second.output_text]

    def client(server: ServerProcess, name: str) -> openai.OpenAI:
        return openai.OpenAI(
            base_url=server.openai_url(name, session), api_key="test", max_retries=0
        )

    seen = converse(client(recorder.server, "weather-single"))
    (recorded,) = load_paths([recorder.end(f"weather-single-{session}")])
    assert len(recorded.turns) == 2
    Client(replay.url).add_scenario(recorded.source)
    assert (
        converse(client(replay, recorded.name))
        == seen
        == ['{"city":"Paris"}', "It is 18 °C and sunny in Paris."]
    )


# --- secrets --------------------------------------------------------------------------------


def test_no_secret_from_request_headers_lands_in_the_output_dir(
    server: ServerProcess, tmp_path: Path, session: str
) -> None:
    secrets = {
        "authorization": f"Bearer {SECRET_KEY}",
        "x-api-key": "sk-ant-api03-secretAnthropicKey42",
        "cookie": "session_token=cookieSecretValue123; theme=dark",
        "x-custom-auth-token": "customSecretToken987",
    }
    out = tmp_path / "out"
    upstream = f"{server.url}/s/{{scenario}}/{{session}}"
    with running_command(
        "record", "--upstream", upstream, "--out", str(out), "--redact", r"\b\d{4}-\d{4}-\d{4}\b"
    ) as rec:
        client = openai.OpenAI(
            base_url=rec.openai_url("weather-single", session),
            api_key=SECRET_KEY,
            default_headers={k: v for k, v in secrets.items() if k != "authorization"},
            max_retries=0,
        )
        # The key and a card number pasted into the conversation are masked too.
        question = f"Weather in Paris? my key is {SECRET_KEY}, card 1234-5678-9012"
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": question}], tools=TOOLS
        )
        client.close()
        rec.http.post("/_mockllm/record/end", params={"name": f"weather-single-{session}"})
        console = rec.console.read_text()
    written = "\n".join(p.read_text() for p in out.iterdir()) + console
    for value in [
        SECRET_KEY,
        "secretAnthropicKey42",
        "cookieSecretValue123",
        "customSecretToken987",
        "1234-5678-9012",
    ]:
        assert value not in written
    (scenario,) = load_paths(list(out.iterdir()))
    expect = scenario.turns[0].expect
    assert expect is not None and expect.user is not None
    assert (
        expect.user.value == "Weather in Paris? my key is"
    )  # cut before the secret: it still matches


# --- streaming, console, Ctrl-C --------------------------------------------------------------


def test_a_streaming_client_gets_its_first_event_before_the_upstream_has_finished(
    server: ServerProcess, recorder: Recorder, session: str
) -> None:
    client = openai.OpenAI(
        base_url=recorder.server.openai_url("slow-stream", session), api_key="test", max_retries=0
    )
    stream = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "count"}], stream=True
    )
    chunks = iter(stream)
    first = next(chunks)
    # The upstream logs an entry as finished (duration set) only once its last byte is out.
    assert server.last(session)["duration_ms"] is None
    rest = list(chunks)
    assert server.last(session)["duration_ms"] is not None
    text = "".join(c.choices[0].delta.content or "" for c in [first, *rest] if c.choices)
    assert text == "One, two, three, four, five, six."
    client.close()


def test_ctrl_c_finishes_the_exchange_in_flight_then_names_every_file(
    server: ServerProcess, tmp_path: Path, session: str
) -> None:
    out = tmp_path / "out"
    upstream = f"{server.url}/s/{{scenario}}/{{session}}"
    with running_command("record", "--upstream", upstream, "--out", str(out)) as rec:
        client = openai.OpenAI(
            base_url=rec.openai_url("slow-stream", session), api_key="test", max_retries=0
        )
        stream = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "count"}], stream=True
        )
        chunks = iter(stream)
        first = next(chunks)
        rec.process.send_signal(signal.SIGINT)  # mid-stream
        rest = list(chunks)
        assert rec.process.wait(20) == 0
        console = rec.console.read_text()
        client.close()
    text = "".join(c.choices[0].delta.content or "" for c in [first, *rest] if c.choices)
    assert text == "One, two, three, four, five, six."
    path = out / f"slow-stream-{session}.yaml"
    assert f"wrote {path} (1 turns)" in console
    assert f"slow-stream-{session} turn 0/1  200 stream  stop" in console
    (scenario,) = load_paths([path])
    assert scenario.turns[0].reply.text == text
    assert mockllm_cli("validate", str(out)).stdout == "ok: 1 scenario in 1 file\n"


# --- what is only forwarded ------------------------------------------------------------------


def printed(process: ServerProcess, text: str) -> None:
    """Wait for a console line: it is printed once the exchange is over, which may be a
    moment after the client has its answer."""
    deadline = time.monotonic() + 10
    while text not in process.console.read_text():
        assert time.monotonic() < deadline, f"never printed: {text!r}"
        time.sleep(0.05)


def test_other_routes_are_forwarded_unchanged_and_not_recorded(
    server: ServerProcess, recorder: Recorder, session: str
) -> None:
    through = recorder.server.http.get(f"/s/hello/{session}/v1/models")
    direct = server.http.get(f"/s/hello/{session}/v1/models")
    assert (through.status_code, through.content) == (200, direct.content)
    printed(
        recorder.server, f"GET /s/hello/{session}/v1/models  200  not recorded: not a model route"
    )
    assert not list(recorder.out.glob(f"*{session}*"))


def test_an_unreachable_upstream_is_a_502_in_the_provider_s_shape_and_not_recorded(
    tmp_path: Path, session: str
) -> None:
    out = tmp_path / "out"
    with running_command("record", "--upstream", "http://127.0.0.1:9", "--out", str(out)) as rec:
        client = anthropic.Anthropic(
            base_url=f"{rec.url}/s/hello/{session}", api_key="test", max_retries=0
        )
        with pytest.raises(anthropic.APIStatusError, match="did not answer") as caught:
            client.messages.create(
                model="claude-sonnet-4-6",
                max_tokens=10,
                messages=[{"role": "user", "content": "hi"}],
            )
        client.close()
        assert caught.value.status_code == 502
        assert caught.value.body["type"] == "error"
        printed(rec, "not recorded: the upstream did not answer")
    assert not out.exists()


def test_the_banner_gives_each_sdk_its_base_url(recorder: Recorder) -> None:
    # The same three SDKs as `mockllm serve`'s banner: a Gemini user is not left to guess.
    url = recorder.server.url
    printed = recorder.server.console.read_text()
    assert f'OpenAI(base_url="{url}/s/NAME/SESSION/v1"' in printed
    assert f'Anthropic(base_url="{url}/s/NAME/SESSION"' in printed
    assert f'http_options={{"base_url": "{url}/s/NAME/SESSION"}}' in printed
