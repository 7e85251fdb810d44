"""report.html in a real headless Chromium: loads from file://, no network, no console
errors, charts drawn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chromium import chromium

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    """A headless Chromium with browser and performance logs."""
    with chromium(tmp_path_factory.mktemp("chrome-profile"), logs=True) as drv:
        yield drv


@pytest.fixture(scope="module")
def report_html(tmp_path_factory, parity_dir_module):
    from profiler_core.report import write_report

    out = tmp_path_factory.mktemp("browser-report")
    return write_report(parity_dir_module / "report-rows.jsonl.gz", out).html


@pytest.fixture(scope="module")
def parity_dir_module():
    from conftest import PARITY

    return PARITY


def _requests(driver) -> list[str]:
    """URLs of every network request the page made (from the DevTools performance log)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def test_report_loads_offline_without_errors_and_draws_charts(driver, report_html):
    url = report_html.resolve().as_uri()
    driver.get_log("performance")  # drop anything logged before this page
    driver.get(url)
    assert driver.execute_script("return document.readyState") == "complete"
    assert "Report" in driver.title

    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    requests = _requests(driver)
    assert requests and all(u == url for u in requests), requests

    sizes = driver.execute_script(
        "return Array.from(document.querySelectorAll('svg.chart')).map(s => {"
        "const r = s.getBoundingClientRect(); return [r.width, r.height]; })"
    )
    assert len(sizes) >= 6
    assert all(w > 100 and h > 50 for w, h in sizes), sizes
    # Charts carry their labels as text (svg.fonttype none): the browser lays them out.
    assert (
        driver.execute_script(
            "return document.querySelectorAll('svg.chart text').length"
        )
        > 50
    )

    # A comparison row links to the per-scenario breakdown of its metric.
    link = driver.find_element(
        "css selector", "#comparison a[href='#metric-cost_total_usd']"
    )
    link.click()
    assert driver.execute_script("return location.hash") == "#metric-cost_total_usd"
    assert driver.execute_script(
        "const r = "
        "document.getElementById('metric-cost_total_usd').getBoundingClientRect(); "
        "return r.top < 200"
    )
    driver.execute_script("window.scrollTo(0, 0)")
    ARTIFACTS.mkdir(exist_ok=True)
    assert driver.save_screenshot(str(ARTIFACTS / "report.png"))


def test_report_reads_on_a_phone_width(driver, report_html):
    driver.set_window_size(390, 844)
    try:
        driver.get(report_html.resolve().as_uri())
        # Nothing but the tables' own scroll boxes may be wider than the screen.
        overflow = driver.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 1
        widths = driver.execute_script(
            "return Array.from(document.querySelectorAll('svg.chart')).map(s "
            "=> s.getBoundingClientRect().width)"
        )
        assert widths and all(0 < w <= 390 for w in widths)
        ARTIFACTS.mkdir(exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / "report-phone.png"))
    finally:
        driver.set_window_size(1280, 900)
