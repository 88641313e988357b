"""The Vercel AI SDK's tests (tests/frameworks/vercel, Node test runner), which start their
own server with the Node client: every case must pass, and none may be lost."""

from __future__ import annotations

from tests.support import ROOT, node_test_counts, run_node_tests

VERCEL = ROOT / "tests" / "frameworks" / "vercel"


def test_vercel_ai_sdk_suite_passes() -> None:
    output = run_node_tests(VERCEL, "node", "--test", "--test-reporter=tap", ".")
    # 4 providers x 2 functions x 3 scenarios, 2 x 2 DeepSeek reasoning cases, the
    # Responses item_reference cases (AI SDK 6 and 5), the guard
    assert node_test_counts(output) == (31, 0), output
