"""Issue 24's two small defects, through a real server: headers that name an account
(`OpenAI-Organization`, `OpenAI-Project`, …) are redacted in the log like keys, and the disk
cache is bounded in entries and bytes by its flags (MOCKLLM_CACHE_MAX_ENTRIES/_BYTES)."""

from __future__ import annotations

from pathlib import Path

import httpx
import openai
import pytest

from tests.support import running_server


def test_account_headers_are_redacted_like_keys(session: str) -> None:
    with running_server() as server:
        client = openai.OpenAI(
            base_url=server.openai_url("hello", session),
            api_key="sk-test-key",
            organization="org-AcmeSecret123",
            project="proj_AcmeSecret456",
            default_headers={"ChatGPT-Account-Id": "acct-789", "X-Goog-User-Project": "p-1"},
        )
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        (entry,) = server.requests(session=session)
        headers = entry["headers"]
        for name in ("openai-organization", "openai-project", "chatgpt-account-id",
                     "x-goog-user-project", "authorization"):  # fmt: skip
            assert headers[name].startswith("[redacted "), (name, headers[name])
        assert headers["user-agent"].startswith("OpenAI/Python")  # not every header
        assert "AcmeSecret" not in server.log_file.read_text()


def tool(i: int) -> dict[str, object]:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "string"}}, "required": []}
    return {"type": "function", "function": {"name": f"t{i}", "parameters": schema}}


@pytest.mark.parametrize(("flag", "value"), [("MOCKLLM_CACHE_MAX_ENTRIES", "5"),
                                             ("MOCKLLM_CACHE_MAX_BYTES", "200")])  # fmt: skip
def test_the_disk_cache_keeps_to_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, session: str, flag: str, value: str
) -> None:
    monkeypatch.setenv("MOCKLLM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(flag, value)
    with running_server() as server:
        url = f"{server.url}/s/hello/{session}/v1/chat/completions"
        for i in range(30):  # 30 distinct tool schemas: 30 entries without a bound
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}],
                    "tools": [tool(i)]}  # fmt: skip
            assert httpx.post(url, json=body, timeout=10).status_code == 200
    files = list((tmp_path / "schemas").glob("*.json"))
    assert files, "schemas are cached"
    if flag.endswith("ENTRIES"):
        assert len(files) == 5
    else:
        assert sum(f.stat().st_size for f in files) <= 200 and len(files) < 30
