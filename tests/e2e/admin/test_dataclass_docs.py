"""Every dataclass `mockllm serve` makes at start says what it is in a docstring: one without
has dataclasses build its `__doc__` from `inspect.signature` (40 of them were about 2 % of
a start's instructions, callgrind)."""

from __future__ import annotations

import json
import subprocess
import sys

# In a fresh interpreter: this process has imported more than a start does.
PROBE = """
import dataclasses, inspect, json, sys
import mockllm.cli, mockllm.serving.server
made, generated = 0, []
for name, module in sorted(sys.modules.items()):
    if name == "mockllm" or name.startswith("mockllm."):
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == name and dataclasses.is_dataclass(value):
                made += 1
                signature = value.__name__ + str(inspect.signature(value)).replace(" -> None", "")
                if value.__doc__ == signature:
                    generated.append(name + "." + value.__qualname__)
print(json.dumps([made, generated]))
"""


def test_every_dataclass_at_start_has_a_docstring_of_its_own() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    made, generated = json.loads(done.stdout)
    assert made > 40
    assert generated == []
