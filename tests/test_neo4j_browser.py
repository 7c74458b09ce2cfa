"""Neo4j Browser, as a person uses it: headless Chromium opens the Browser the local Neo4j
serves, logs in, applies docs/neo4j-browser.grass with `:style` and runs the guide's first
starter query, on the ingest example's run (a reopened decomposition: at most 40 nodes
drawn, stale goals unlike live ones; its root's constraints one drawn line each, however
many roles they play) and then on the CSV example's (an UNSAT attempt and
a SAT one in different fills), then on the flywheel's graph kept by `kernel bench flywheel
--keep` (its newest tree at most 40 nodes; a retried goal's UNSAT and SAT attempts in
different fills; and what tests/test_flywheel_keep.py checks of the kept graph on the
embedded store); no caption is cut. TEST_BROWSER_SHOTS=DIR keeps the
screenshots there (docs/ holds the guide's)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernel.bench.examples import EXAMPLES, Example
from kernel.store import GraphStore
from tests.conftest import CHECKOUT, TEST_NEO4J, store_env
from tests.sandbox_support import needs_sandbox
from tests.test_flywheel_keep import assert_kept_flywheel

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SAT_GREEN, UNSAT_RED, RESOLVED_BLUE = "#57C785", "#F16667", "#4C8EDA"

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


def _starter_query(first_line: str = "// A run's goal tree") -> str:
    guide = (CHECKOUT / "docs" / "neo4j-browser.md").read_text()
    found = re.search(r"```cypher\n(" + re.escape(first_line) + r".*?)```", guide, re.S)
    assert found, f"the guide's starter query '{first_line}' is gone"
    return found.group(1)


ROOT_CONSTRAINTS = """MATCH (r:Run)-[:ROOT]->(root:Goal)
WITH r, root ORDER BY r.started_at DESC LIMIT 1
MATCH (root)-[h:HAS_CONSTRAINT]->(c:Constraint)
RETURN count(h) AS pairs, sum(size(h.roles)) AS roles"""


def _solving(env: dict[str, str], example: Example, log: Path) -> subprocess.Popen[bytes]:
    """``kernel solve`` of ``example`` started, not waited for: Chromium starts and logs in
    meanwhile (the Browser reads nothing of the run until it is drawn). Its errors go to
    ``log``, which no pipe left unread can stall."""
    with log.open("wb") as errors:
        return subprocess.Popen(
            [sys.executable, "-c", "from kernel.cli.app import main; main()",
             *example.command(), "--progress", "none"], env=env,
            stdout=subprocess.DEVNULL, stderr=errors)


def _solved(solving: subprocess.Popen[bytes], log: Path) -> None:
    solving.wait(timeout=900)
    assert solving.returncode == 0, log.read_text(errors="replace")[-2000:]


def _solve(env: dict[str, str], example: Example, log: Path) -> None:
    _solved(_solving(env, example, log), log)


# Until the drawing stops changing (nodes, lines and where they stand, the same at two
# looks in a row; the Browser adds the lines between a result's nodes with a second
# query, and lays them out by a force simulation), for at most the three seconds the
# layout was given before.
SETTLED = """() => {
  const now = [...document.querySelectorAll('svg g.node, svg g.relationship')]
    .map((g) => g.getAttribute('transform') || g.querySelector('path')?.getAttribute('d'))
    .join('|');
  const same = now !== '' && now === window.__lastDrawing;
  window.__lastDrawing = now;
  return same;
}"""


RETRIED = """// A goal of the flywheel whose first attempt failed, with all its attempts
MATCH (:Attempt:Unsat)-[:FOR]->(g:Goal)
WITH g ORDER BY g.id DESC LIMIT 1
MATCH p = (:Attempt)-[:FOR]->(g)
RETURN p"""


def _fills_of(drawn: list[tuple[str, str]], captions: set[str]) -> set[str]:
    squeezed = {"".join(c.split()) for c in captions}
    return {fill for caption, fill in drawn if "".join(caption.split()) in squeezed}


def _captions(store: GraphStore, query: str) -> set[str]:
    return {row[0] for row in store.execute_adhoc(query, {}, write=False).rows}


def test_the_browser_shows_a_run_in_the_projects_style(
        neo4j_store: GraphStore, neo4j_server: tuple[str, str], browser_url: str,
        data_dir: Path, tmp_path: Path) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    env = {**os.environ, **store_env(neo4j_store, data_dir)}
    examples = {e.name: e for e in EXAMPLES}
    ingest_log = tmp_path / "ingest-solve.log"
    ingest_solving = _solving(env, examples["ingest-pipeline"], ingest_log)  # reopens a
    # decomposition: stale goals

    bolt = neo4j_server[0].split("://", 1)[1]
    shots = Path(os.environ.get("TEST_BROWSER_SHOTS") or tmp_path)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1600, "height": 1100})
        try:
            page.goto(f"{browser_url}?dbms=neo4j://neo4j@{bolt}")
            page.locator("input[data-testid=password]").fill(neo4j_server[1])
            page.locator("button[data-testid=connect]").click()
            page.wait_for_selector("text=You are connected", timeout=60_000)

            def run(command: str) -> None:
                page.locator(".monaco-editor").first.click()
                page.keyboard.insert_text(command)
                page.locator("[data-testid=editor-Run]").first.click()

            def draw(query: str, shot: str) -> list[tuple[str, str]]:
                run(":clear")  # only this query's frame on the page
                page.wait_for_selector("svg g.node", state="detached", timeout=30_000)
                page.evaluate("window.__lastDrawing = null")  # nothing of the last drawing
                run(query)
                page.wait_for_selector("svg g.node", timeout=60_000)
                # still moving after three seconds: drawn as it stands, as before
                with contextlib.suppress(PlaywrightTimeout):
                    page.wait_for_function(SETTLED, polling=300, timeout=3000)
                page.screenshot(path=str(shots / shot))
                nodes = []
                for node in page.locator("svg g.node").all():
                    lines = [t.text_content() or "" for t in node.locator("text").all()]
                    fill = node.locator("circle.b-outline").first.get_attribute("fill") or ""
                    nodes.append((" ".join(" ".join(lines).split()), fill.lower()))
                return nodes

            run(_style())
            page.wait_for_selector("text=diameter: 130px", timeout=30_000)  # the style frame
            _solved(ingest_solving, ingest_log)

            ingest = draw(_starter_query(), "neo4j-browser-ingest.png")
            draw(_starter_query("// The newest run's root and its constraints, drawn"),
                 "neo4j-browser-constraints.png")
            constraint_lines = page.locator("svg g.relationship").count()
            pairs, roles = neo4j_store.execute_adhoc(ROOT_CONSTRAINTS, {}, write=False).rows[0]
            _solve(env, examples["csv-cli"], tmp_path / "csv-solve.log")  # UNSAT, then SAT
            csv = draw(_starter_query(), "neo4j-browser-csv.png")
            runs_before = int(neo4j_store.execute_adhoc(
                "MATCH (r:Run) RETURN count(r)", {}, write=False).rows[0][0])
            kept = subprocess.run(  # the flywheel's forty runs, kept in the same graph
                [sys.executable, "-c", "from kernel.cli.app import main; main()", "bench",
                 "flywheel", "--keep", "--json"], env=env, capture_output=True, text=True,
                timeout=3600, check=False)
            assert kept.returncode == 0, kept.stderr[-2000:]
            flywheel = draw(_starter_query(), "neo4j-browser-flywheel.png")
            retried = draw(RETRIED, "neo4j-browser-flywheel-retry.png")
        except Exception:
            page.screenshot(path=str(shots / "neo4j-browser-failed.png"))
            print(f"screenshot: {shots / 'neo4j-browser-failed.png'}")
            raise
        finally:
            browser.close()
            if ingest_solving.poll() is None:
                ingest_solving.kill()
                ingest_solving.wait()

    # the ingest run's tree: few enough nodes to read, superseded stages unlike live ones
    assert 0 < len(ingest) <= 40, len(ingest)
    stale = _fills_of(ingest, _captions(neo4j_store, "MATCH (g:Goal:Stale) RETURN g.caption"))
    live = _fills_of(ingest, _captions(
        neo4j_store, "MATCH (g:Goal) WHERE NOT g:Stale RETURN g.caption"))
    assert stale and live and not stale & live, (stale, live)
    # one drawn line per goal and constraint, though several play more than one role
    assert 0 < pairs < roles and constraint_lines == pairs, (constraint_lines, pairs, roles)

    drawn = " ".join(caption for caption, _ in csv)
    assert "Build a Python CLI tool" in drawn, drawn
    unsat = {fill for caption, fill in csv if re.search(r"attempt \d+: UNSAT$", caption)}
    sat = {fill for caption, fill in csv if re.search(r"attempt \d+: SAT$", caption)}
    assert unsat and sat and not unsat & sat, (unsat, sat)
    assert {SAT_GREEN.lower(), UNSAT_RED.lower(), RESOLVED_BLUE.lower()} <= \
        {fill for _, fill in csv}, csv
    # the kept flywheel graph: its newest tree, and a goal whose first attempt failed
    assert 0 < len(flywheel) <= 40, len(flywheel)
    unsat = {fill for caption, fill in retried if re.search(r"attempt \d+: UNSAT$", caption)}
    sat = {fill for caption, fill in retried if re.search(r"attempt \d+: SAT$", caption)}
    assert unsat and sat and not unsat & sat, retried
    stored = {"".join(c.split()) for c in _captions(
        neo4j_store, "MATCH (n) WHERE n.caption IS NOT NULL RETURN n.caption")}
    cut = [caption for caption, _ in ingest + csv + flywheel + retried
           if "".join(caption.split()) not in stored]
    assert not cut, cut  # each drawn caption is a node's whole caption
    assert (shots / "neo4j-browser-csv.png").stat().st_size > 20_000
    # and the kept graph itself, as the embedded store's test checks it
    assert_kept_flywheel(neo4j_store, data_dir, tmp_path, kept, runs_before)
    print(f"screenshots: {shots}")
