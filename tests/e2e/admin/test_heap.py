"""`mockllm serve` freezes what start-up built and collects young objects less often
(serving/server.py, `settle_heap`); `mockllm.serve()` in someone else's process does
neither."""

from __future__ import annotations

import gc
import subprocess
import sys

import mockllm
from mockllm.serving.server import YOUNG_COLLECTION_EVERY

# Stand in for uvicorn's loop: report what the collector sees at the moment serving starts.
PROBE = """
import gc, sys
import mockllm.serving.server as server
def report(self, sockets=None):
    print("frozen", gc.get_freeze_count(), "tracked", len(gc.get_objects()),
          "threshold", gc.get_threshold()[0])
server.Server.run = report
from mockllm.cli import main
sys.argv = ["mockllm", "serve", "--port", "0", "--quiet"]
main()
"""


def test_serve_freezes_start_up_objects_before_serving() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    words = done.stdout.split()
    frozen, tracked = int(words[words.index("frozen") + 1]), int(words[words.index("tracked") + 1])
    assert frozen > 10_000, done.stdout  # the modules and the bundled scenarios
    assert tracked < 1_000, done.stdout  # what a full collection still walks
    threshold = int(words[words.index("threshold") + 1])
    assert threshold == YOUNG_COLLECTION_EVERY > gc.get_threshold()[0], done.stdout


def test_serve_in_someone_elses_process_leaves_their_heap_alone() -> None:
    before = gc.get_freeze_count(), gc.get_threshold()
    with mockllm.serve() as server:
        assert server.client.health()["scenarios"] > 0
        assert (gc.get_freeze_count(), gc.get_threshold()) == before
