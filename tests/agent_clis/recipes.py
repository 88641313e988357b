"""The recipes of docs/agents.md, as the tests run them: each ```sh block whose first line
is `# recipe: NAME` is a script that points one agent CLI at `$MOCKLLM_URL` (a mockllm base
URL with scenario and session) and runs it once. The tests run those very scripts, so the
page cannot drift from what works."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
_BLOCK = re.compile(r"```sh\n# recipe: (?P<name>[\w-]+)\n(?P<body>.*?)```", re.S)


@cache
def recipes() -> dict[str, str]:
    found = {m["name"]: m["body"] for m in _BLOCK.finditer(DOC.read_text())}
    assert found, f"no recipes in {DOC}"
    return found


def script(name: str, prompt: str, **variables: str) -> str:
    """The recipe `name`, its prompt (the `$PROMPT` variable) and other variables given."""
    body = recipes()[name]
    given = "".join(f"{k}={_quote(v)}\n" for k, v in {"PROMPT": prompt, **variables}.items())
    return f"set -e\n{given}{body}"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
