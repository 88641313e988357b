"""`make screenshots`: the pictures in docs/viewer.md, taken from a real run — a real
server, the official SDK playing bundled scenarios (tests/support/viewer_story.py), and Debian's
headless Chromium showing the live viewer and the static report."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from selenium.webdriver.remote.webdriver import WebDriver

from mockllm.viewer.page import report_page
from tests.support import ROOT, running_server
from tests.support.browser import Viewer, chromium, missing
from tests.support.viewer_story import SUITE, log_of, play

OUT = ROOT / "docs" / "img"


def main() -> int:
    reason = missing()
    if reason:
        print(f"screenshots: {reason}", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    with (
        running_server() as server,
        chromium(1280, 860) as driver,
        tempfile.TemporaryDirectory() as tmp,
    ):
        story = play(server, "docs")
        viewer = Viewer(driver).open(f"{server.url}/_mockllm/ui")
        shots = {
            "viewer-live-tool-loop.png": (story.loop, ".call-row"),
            "viewer-live-stream-cut.png": (story.cut, "mark.cut"),
        }
        for name, (session, focus) in shots.items():
            viewer.pick(session)
            show(driver, focus, str(OUT / name))
        entries = [e for s in story.sessions for e in log_of(server, s)]
        report = Path(tmp) / "report.html"
        report.write_text(report_page(entries, title="mockllm report: requests.jsonl"), "utf-8")
        viewer.open(report.as_uri()).pick(story.diverged)
        show(driver, ".divergence", str(OUT / "viewer-report-diverged.png"))
        viewer.open(pytest_report(Path(tmp)).as_uri())
        show(driver, "section.test", str(OUT / "viewer-pytest-report.png"))
        taken = [*shots, "viewer-report-diverged.png", "viewer-pytest-report.png"]
        print(f"screenshots: wrote {', '.join(taken)} in {OUT}")
    return 0


def pytest_report(folder: Path) -> Path:
    """Run a small suite with --mockllm-html, as a user would; its report."""
    (folder / "test_suite.py").write_text(SUITE)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    subprocess.run([*command, "--mockllm-html=report.html", "test_suite.py"], cwd=folder)
    return folder / "report.html"


def show(driver: WebDriver, selector: str, path: str) -> None:
    """Scroll what the picture is about to the middle of the window, then take it."""
    driver.execute_script(
        "document.querySelector(arguments[0]).scrollIntoView({block: 'center'})", selector
    )
    driver.save_screenshot(path)


if __name__ == "__main__":
    sys.exit(main())
