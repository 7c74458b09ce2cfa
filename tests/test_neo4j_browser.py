"""Neo4j Browser, as a person uses it: headless Chromium opens the Browser the local Neo4j
serves, logs in, applies docs/neo4j-browser.grass with `:style`, runs the guide's first
starter query on a run the CSV example made, and the drawn graph shows readable captions
(the goal's title, each attempt's verdict, spends in USD) in the style's colours."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernel.store import GraphStore
from tests.conftest import CHECKOUT, TEST_NEO4J, store_env
from tests.sandbox_support import needs_sandbox

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
GOAL = ("Build a Python CLI tool that reads a CSV file and outputs the top 10 rows sorted by "
        "a user-specified column")
ATTEMPT_RED, GOAL_BLUE = "#F16667", "#4C8EDA"

pytestmark = [
    pytest.mark.slow, pytest.mark.neo4j, needs_sandbox,
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium here: 'make test' installs "
                       "Debian's chromium package where it can"),
]


@pytest.fixture
def browser_url(neo4j_server: tuple[str, str]) -> str:
    """Where the server under test serves the Browser: TEST_NEO4J_BROWSER, else the local
    server's HTTP port (neo4j/ctl.py keeps it beside its data)."""
    if os.environ.get("TEST_NEO4J_BROWSER"):
        return os.environ["TEST_NEO4J_BROWSER"]
    ports = Path(TEST_NEO4J[TEST_NEO4J.index("--home") + 1]) / "ports"
    if not ports.exists():
        pytest.skip("the Neo4j under test is not the local one: set TEST_NEO4J_BROWSER")
    return f"http://127.0.0.1:{ports.read_text().split()[1]}/browser/"


def _style() -> str:
    """The project's style as one `:style` command (its comments dropped)."""
    grass = (CHECKOUT / "docs" / "neo4j-browser.grass").read_text()
    return ":style " + " ".join(re.sub(r"/\*.*?\*/", "", grass, flags=re.S).split())


def _starter_query() -> str:
    guide = (CHECKOUT / "docs" / "neo4j-browser.md").read_text()
    found = re.search(r"```cypher\n(// A run's goal tree.*?)```", guide, re.S)
    assert found, "the guide's first starter query is gone"
    return found.group(1)


def test_the_browser_shows_a_run_in_the_projects_style(
        neo4j_store: GraphStore, neo4j_server: tuple[str, str], browser_url: str,
        data_dir: Path, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    env = {**os.environ, **store_env(neo4j_store, data_dir)}
    solved = subprocess.run(
        [sys.executable, "-c", "from kernel.cli.app import main; main()", "solve", GOAL,
         "--proposer", "scripted", "--script", str(CHECKOUT / "seeds" / "examples" / "csv-cli.script.yaml"),
         "--budget", "2", "--time", "600", "--progress", "none"],
        env=env, capture_output=True, text=True, timeout=600, check=False)
    assert solved.returncode == 0, solved.stderr[-2000:]

    bolt = neo4j_server[0].split("://", 1)[1]
    shot = tmp_path / "browser.png"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1100})
            page.goto(f"{browser_url}?dbms=neo4j://neo4j@{bolt}")
            page.locator("input[data-testid=password]").fill(neo4j_server[1])
            page.locator("button[data-testid=connect]").click()
            page.wait_for_selector("text=You are connected", timeout=60_000)

            def run(command: str) -> None:
                page.locator(".monaco-editor").first.click()
                page.keyboard.insert_text(command)
                page.locator("[data-testid=editor-Run]").first.click()

            run(_style())
            page.wait_for_selector("text=diameter: 90px", timeout=30_000)  # the style frame
            run(_starter_query())
            page.wait_for_selector("svg .node", timeout=60_000)
            page.wait_for_timeout(3000)  # the layout settles
            captions = [t.text_content() or "" for t in page.locator("svg .node text").all()]
            fills = {c.get_attribute("fill") for c in page.locator("svg .node circle.b-outline")
                     .all()}
            page.screenshot(path=str(shot))
        except Exception:
            page.screenshot(path=str(shot))  # what the page showed when it went wrong
            print(f"screenshot: {shot}")
            raise
        finally:
            browser.close()

    # Captions are drawn as lines of a node's text: join each node's lines back up.
    drawn = " ".join(" ".join(c.split()) for c in captions)
    assert "Build a Python CLI tool" in drawn, drawn
    assert re.search(r"attempt 1: UNSAT", drawn) and re.search(r"attempt 2: SAT", drawn), drawn
    assert re.search(r"spend \$0\.\d{6}", drawn), drawn
    assert "allocate $2.000000" in drawn, drawn
    assert {ATTEMPT_RED.lower(), GOAL_BLUE.lower()} <= {f.lower() for f in fills if f}, fills
    assert shot.stat().st_size > 50_000
    print(f"screenshot: {shot}")
