"""A real headless Chromium for the viewer's tests, `make screenshots` and `make bench`:
Debian's `chromium` and `chromium-driver` (tests/ensure-debian.sh installs them), driven
by selenium. Never a downloaded browser: Selenium Manager is kept offline and is given
both paths, and the browser's own background traffic is switched off."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = os.environ.get("MOCKLLM_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = (
    os.environ.get("MOCKLLM_CHROMEDRIVER")
    or shutil.which("chromedriver")
    or "/usr/bin/chromedriver"
)
FLAGS = (
    "--headless",
    "--no-sandbox",  # root in CI containers
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def missing() -> str | None:
    """Why no browser can run here, or None."""
    absent = [p for p in (CHROMIUM, DRIVER) if not os.access(p, os.X_OK)]
    if absent:
        return (
            f"NO BROWSER: {', '.join(absent)} not installed (Debian packages chromium and "
            "chromium-driver; `make test` installs them when it runs as root)"
        )
    return None


@contextmanager
def chromium(width: int = 1280, height: int = 900) -> Iterator[WebDriver]:
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must never download
    with tempfile.TemporaryDirectory(prefix="mockllm-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"):
            options.add_argument(flag)
        driver = webdriver.Chrome(options=options, service=Service(DRIVER))
        try:
            yield driver
        finally:
            driver.quit()


class Viewer:
    """What a person does with the viewer page, and what they see."""

    def __init__(self, driver: WebDriver) -> None:
        self.driver = driver

    def open(self, url: str) -> Viewer:
        self.driver.get(url)
        self.wait(lambda d: d.find_element(By.TAG_NAME, "html").get_attribute("data-rendered"))
        return self

    def wait(self, until: object, timeout: float = 10) -> object:
        # A live page redraws as requests arrive: an element found a moment ago may be gone.
        wait = WebDriverWait(
            self.driver, timeout, 0.05, ignored_exceptions=[StaleElementReferenceException]
        )
        return wait.until(until)

    def sessions(self) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, "#sessions button")

    def names(self) -> list[str]:
        return [str(b.get_attribute("data-session")) for b in self.sessions()]

    def pick(self, session: str) -> WebElement:
        """Click the session in the list; the open session's view."""

        def click(driver: WebDriver) -> bool:
            button = next(
                (b for b in self.sessions() if b.get_attribute("data-session") == session), None
            )
            if button is not None:
                button.click()
            return button is not None

        self.wait(click)
        current = '#sessions button[aria-current="true"]'
        self.wait(
            lambda d: (
                d.find_element(By.CSS_SELECTOR, current).get_attribute("data-session") == session
            )
        )
        return self.driver.find_element(By.ID, "detail")

    def call_row(self, call_id: str) -> WebElement:
        rows = self.driver.find_elements(By.CSS_SELECTOR, ".call-row")
        return next(r for r in rows if r.get_attribute("aria-label").endswith(" " + call_id))
