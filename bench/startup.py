"""How long until a mockllm server answers: in-process thread vs subprocess.

    .venv/bin/python bench/startup.py [RUNS]

Each run is a fresh interpreter, so imports are counted as a test process pays them
(pytest itself already imported). Prints the median and range of each way, in ms.
"""

from __future__ import annotations

import statistics
import subprocess
import sys

_THREAD = """
import time, pytest
t0 = time.perf_counter()
import mockllm
with mockllm.serve() as server:
    server.client.health()
    print((time.perf_counter() - t0) * 1000)
"""

_SUBPROCESS = """
import os, subprocess, sys, tempfile, time, pytest
t0 = time.perf_counter()
from mockllm.testing.client import Client
with tempfile.TemporaryDirectory() as tmp:
    ready = os.path.join(tmp, "ready")
    p = subprocess.Popen([sys.executable, "-m", "mockllm", "serve", "--port", "0",
                          "--ready-file", ready], stdout=subprocess.DEVNULL)
    while not os.path.exists(ready):
        time.sleep(0.005)
    Client(open(ready).read().strip()).health()
    print((time.perf_counter() - t0) * 1000)
    p.terminate(); p.wait()
"""


def measure(code: str, runs: int) -> list[float]:
    return [
        float(subprocess.check_output([sys.executable, "-c", code], text=True)) for _ in range(runs)
    ]


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    for name, code in (("thread", _THREAD), ("subprocess", _SUBPROCESS)):
        ms = measure(code, runs)
        print(
            f"{name:>10}: median {statistics.median(ms):6.0f} ms"
            f"  (min {min(ms):.0f}, max {max(ms):.0f}, {runs} runs)"
        )


if __name__ == "__main__":
    main()
