"""A real headless Chromium for the browser tests (in CI a missing browser fails the
test instead of skipping it)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from binaries import system_binary

HINT = "install the Debian packages chromium and chromium-driver"


@contextlib.contextmanager
def chromium(profile_dir: Path, *, logs: bool = False) -> Iterator[object]:
    """A headless Chromium driven by selenium; ``logs`` keeps the browser and DevTools
    performance logs."""
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="selenium not installed (test extra)"
    )
    browser = system_binary("chromium", "chromium-browser", hint=HINT)
    chromedriver = system_binary("chromedriver", hint=HINT)
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = browser
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--window-size=1280,900",
        f"--user-data-dir={profile_dir}",
    ):
        options.add_argument(arg)
    if logs:
        options.set_capability(
            "goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"}
        )
    drv = webdriver.Chrome(service=Service(chromedriver), options=options)
    drv.set_page_load_timeout(60)
    try:
        yield drv
    finally:
        drv.quit()
