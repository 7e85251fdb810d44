"""The HTML verdict of an all-errors run, in a real headless Chromium: error count
first, then "no verdict"."""

from __future__ import annotations

import pytest

from chromium import chromium
from profiler_core.testing import Fail
from test_verdict_trust import run_and_report

pytestmark = pytest.mark.slow


@pytest.fixture
def driver(tmp_path):
    """A headless Chromium (fails in CI when the browser is missing)."""
    with chromium(tmp_path / "chrome-profile") as drv:
        yield drv


def test_all_errors_verdict_says_no_verdict_after_the_error_count(
    tmp_path, driver, profiler_plugin_manager
):
    from selenium.webdriver.common.by import By

    out = run_and_report(
        tmp_path, lambda params, attempt: Fail("boom"), profiler_plugin_manager
    )
    driver.get((out / "report.html").resolve().as_uri())
    text = driver.find_element(By.ID, "verdict").text
    lines = [
        line for line in text.splitlines() if line.strip() and line.strip() != "Verdict"
    ]
    assert "8 of 8 rows errored" in lines[0]
    assert "no verdict on speed: 4 of 4 baseline rows errored" in text
    assert "no verdict on success" in text
    assert "0 ms" not in text
