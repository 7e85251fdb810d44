"""`profiler view` in a real headless Chromium: open a run, sort and filter, click a
failed row, read its tool call output."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from chromium import chromium
from synthetic_runs import grid, write_run

pytestmark = pytest.mark.slow

PROFILER = Path(sys.executable).with_name("profiler")
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


def _outcome(mode: str, scenario: str, i: int) -> dict:
    failed = mode == "baseline" and scenario == "s2" and i == 1
    return {
        "outcome": "fail" if failed else "pass",
        "cost": 0.001 * (7 * i + len(scenario) + len(mode) % 3),
    }


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    """A viewer over one run with a single failed session, in a subprocess."""
    root = tmp_path_factory.mktemp("viewer-browser")
    write_run(
        root, "run_b", grid(["baseline", "fast"], ["s1", "s2", "s3"], 3, _outcome)
    )
    proc = subprocess.Popen(
        [str(PROFILER), "view", "--no-open"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert " at http://127.0.0.1:" in line, line
        yield line.split(" at ", 1)[1].split()[0]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=20)


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("chrome-profile"), logs=True) as drv:
        yield drv


def _table_rows(driver):
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, "table.rows tbody tr")


def _requests(driver) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def test_sort_filter_click_a_failed_row_and_read_its_tool_output(driver, base_url):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    driver.get_log("performance")
    driver.get_log(
        "browser"
    )  # the shared browser's earlier pages (another test's 404) are not this test's errors
    driver.get(base_url)
    assert len(_table_rows(driver)) == 18

    # Sort by cost, highest first: one click on the header (most expensive first for a resource).
    driver.find_element(By.CSS_SELECTOR, "a.sort[data-sort='cost']").click()
    WebDriverWait(driver, 20).until(lambda d: "sort=cost" in d.current_url)
    costs = [
        float(td.text.lstrip("$"))
        for td in driver.find_elements(
            By.CSS_SELECTOR, "table.rows tbody tr td:nth-child(11)"
        )
    ]
    assert costs == sorted(costs, reverse=True) and len(costs) == 18

    # Filter on the result: the select submits itself (viewer.js).
    Select(driver.find_element(By.NAME, "outcome")).select_by_value("fail")
    WebDriverWait(driver, 20).until(lambda d: "outcome=fail" in d.current_url)
    rows = _table_rows(driver)
    assert len(rows) == 1 and "s2" in rows[0].text and "baseline" in rows[0].text
    assert "sort=cost" in driver.current_url  # filtering keeps the sort

    # Click the row itself (not its link): the session opens.
    rows[0].find_element(By.CSS_SELECTOR, "td:nth-child(3)").click()
    WebDriverWait(driver, 20).until(lambda d: "/session?" in d.current_url)
    assert "s2 · baseline · iteration 1" in driver.find_element(By.TAG_NAME, "h1").text

    failed_call = driver.find_element(By.CSS_SELECTOR, ".ev.tool.failed")
    assert "bash" in failed_call.text and "failed" in failed_call.text
    output = failed_call.find_elements(By.CSS_SELECTOR, ".io")[1]
    output.find_element(By.TAG_NAME, "summary").click()  # the long output is folded
    full = output.find_element(By.CSS_SELECTOR, "details pre")
    assert full.is_displayed()
    assert "<script>window.__pwned = 1</script>" in full.text  # shown as text...
    assert driver.execute_script("return window.__pwned === undefined")  # ...never run
    assert full.text.count("long line of output") == 40

    checks = driver.find_element(By.ID, "checks").text
    assert "tests-pass" in checks and "1 failed" in checks and "/passed/" in checks
    assert "flailing" in driver.find_element(By.ID, "findings").text

    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    origin = re.match(r"http://127\.0\.0\.1:\d+", base_url).group(0)
    assert all(
        u.startswith(origin) or u.startswith("data:") for u in _requests(driver)
    )  # no CDN, nothing outside
    ARTIFACTS.mkdir(exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / "viewer-session.png"))


def test_side_by_side_and_search(driver, base_url):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(base_url + "session?model=m1&mode=baseline&scenario=s2&iteration=1")
    driver.find_element(By.PARTIAL_LINK_TEXT, "beside fast").click()
    WebDriverWait(driver, 20).until(lambda d: "/pair?" in d.current_url)
    sides = driver.find_elements(By.CSS_SELECTOR, ".side")
    assert len(sides) == 2
    assert "fail" in sides[0].find_element(By.TAG_NAME, "h2").text
    assert "pass" in sides[1].find_element(By.TAG_NAME, "h2").text

    driver.get(base_url)
    box = driver.find_element(By.NAME, "q")
    box.send_keys("s3")
    box.submit()
    WebDriverWait(driver, 20).until(lambda d: "q=s3" in d.current_url)
    rows = _table_rows(driver)
    assert len(rows) == 6 and all("s3" in r.text for r in rows)


def test_a_traversal_url_gets_404_in_the_browser(driver, base_url):
    from selenium.webdriver.common.by import By

    driver.get(base_url + "..%2F..%2Fresults%2Frun_b.jsonl")
    assert "Not found" in driver.find_element(By.TAG_NAME, "h1").text
    assert "runId" not in driver.page_source


#: Per chart: how many marks are drawn and how many of them point at a shape the page does not have.
_MARKS = """
return Array.from(document.querySelectorAll('svg.chart')).map(svg => {
  const uses = Array.from(svg.querySelectorAll('use'));
  const target = u => (u.getAttribute('xlink:href') || u.getAttribute('href') || '');
  const drawn = uses.filter(u => { const b = u.getBoundingClientRect(); return b.width > 0 || b.height > 0; });  /* a tick is a line: one side is 0 */
  const dangling = uses.filter(u => !target(u).startsWith('#') || !document.getElementById(target(u).slice(1)));
  return [svg.getAttribute('aria-label'), uses.length, drawn.length, dangling.length];
});
"""


def test_every_chart_on_a_runs_page_draws_its_marks(base_url, driver):
    """matplotlib draws dots, ticks and mean markers as ``<use xlink:href="#m…">`` of
    shapes defined once in the SVG:
    a page that rewrites those references draws empty axes."""
    driver.get(base_url)  # one run: the viewer opens on its page
    charts = {
        label: (uses, drawn, dangling)
        for label, uses, drawn, dangling in driver.execute_script(_MARKS)
    }
    assert any(label.startswith("Distribution of Cost") for label in charts), charts
    median = [
        v for label, v in charts.items() if label.startswith("Median Cost per scenario")
    ]
    assert median, charts
    for label, (uses, drawn, dangling) in charts.items():
        assert dangling == 0, f"{label}: {dangling} of {uses} marks point at nothing"
        assert drawn == uses > 0, f"{label}: {drawn} of {uses} marks drawn"
    # One median dot per scenario and mode, at least (3 scenarios x 2 modes).
    assert median[0][1] >= 6
