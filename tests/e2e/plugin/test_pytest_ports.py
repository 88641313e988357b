"""Fixed ports for the plugin's servers (docs/pytest.md), for a machine that lets tests
listen only on listed ports: `--mockllm-port` (ini `mockllm_port`) for the fixture's
server, `--mockllm-record-port` for the in-test recorder; a port in use is said, not a
traceback. Each through a real pytest subprocess."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.e2e.record.test_pytest_record import pytest_run
from tests.support import running_server

pytest_plugins = ["pytester"]

ASKS = """
import pytest
from openai import OpenAI


@pytest.mark.mockllm({marker})
def test_hello(mockllm):
    url = mockllm.url("hello")
    assert url.startswith("http://127.0.0.1:{port}/"), url
    with OpenAI(base_url=url, api_key="k", max_retries=0) as client:
        client.chat.completions.create(model="m", messages=[{{"role": "user", "content": "Hi"}}])
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_the_fixtures_server_listens_on_the_port_given(pytester: pytest.Pytester) -> None:
    port = free_port()
    pytester.makepyfile(test_it=ASKS.format(marker="", port=port))
    pytest_run(pytester, f"--mockllm-port={port}").assert_outcomes(passed=1)
    pytester.makeini(f"[pytest]\nmockllm_port = {port}\n")
    pytest_run(pytester).assert_outcomes(passed=1)


def test_a_port_in_use_is_said(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=ASKS.format(marker="", port=0))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = pytest_run(pytester, f"--mockllm-port={port}")
    out = "\n".join(done.outlines)
    assert done.ret != 0 and "1 error" in out, out
    assert f"mockllm: cannot listen on 127.0.0.1:{port} (--mockllm-port): [Errno 98]" in out
    assert "Traceback" not in out


def test_the_recorder_listens_on_the_port_given(pytester: pytest.Pytester, tmp_path: Path) -> None:
    port = free_port()
    pytester.makepyfile(test_it=ASKS.format(marker="'recorded/hello.yaml'", port=port))
    with running_server() as upstream:
        url = f"{upstream.url}/s/{{scenario}}/{{session}}"
        done = pytest_run(
            pytester, "--mockllm-record=once", f"--mockllm-record-port={port}", upstream=url
        )
        done.assert_outcomes(passed=1)  # its url() was the recorder on that port
        assert len(upstream.requests()) == 1
    assert (pytester.path / "recorded" / "hello.yaml").is_file()
