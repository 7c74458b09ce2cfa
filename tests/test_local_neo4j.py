"""The local Neo4j (neo4j/ctl.py, `make neo4j`): started once, a second start says so and
exits 0 with the two lines that point the kernel at it; its password is the owner's only
and the default one is refused; Neo4j Browser is served beside Bolt."""

from __future__ import annotations

import stat
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, TEST_NEO4J

pytestmark = [pytest.mark.slow, pytest.mark.neo4j]
HOME = Path(TEST_NEO4J[TEST_NEO4J.index("--home") + 1])


@pytest.fixture
def local(neo4j_server: tuple[str, str]) -> tuple[str, str]:
    if not (HOME / "ports").exists():
        pytest.skip("the Neo4j under test is not the local one")
    return neo4j_server


def test_a_second_start_says_it_runs_and_prints_how_to_reach_it(local: tuple[str, str]) -> None:
    again = subprocess.run([sys.executable, str(CHECKOUT / "neo4j" / "ctl.py"), "start",
                            *TEST_NEO4J], capture_output=True, text=True, timeout=120,
                           check=False)
    assert again.returncode == 0, again.stderr
    assert "already running" in again.stderr
    bolt, _ = (HOME / "ports").read_text().split()
    assert again.stdout.splitlines() == [f"KERNEL_GRAPH=neo4j://127.0.0.1:{bolt}",
                                         f"NEO4J_PASSWORD={local[1]}"]


def test_the_password_is_the_owners_and_the_default_one_is_refused(
        local: tuple[str, str]) -> None:
    from neo4j.exceptions import AuthError

    from neo4j import GraphDatabase

    assert stat.S_IMODE((HOME / "password").stat().st_mode) == 0o600
    with GraphDatabase.driver(local[0], auth=("neo4j", "neo4j")) as driver, \
            pytest.raises(AuthError):
        driver.verify_connectivity()
    with GraphDatabase.driver(local[0], auth=("neo4j", local[1])) as driver:
        assert driver.execute_query("RETURN 1 AS one").records[0]["one"] == 1


def test_the_browser_and_the_discovery_document_are_served(local: tuple[str, str]) -> None:
    _, http = (HOME / "ports").read_text().split()
    with urllib.request.urlopen(f"http://127.0.0.1:{http}/", timeout=30) as answer:
        discovery = answer.read().decode()
    assert '"neo4j_edition":"community"' in discovery and '"neo4j_version":"5.26' in discovery
    with urllib.request.urlopen(f"http://127.0.0.1:{http}/browser/", timeout=30) as answer:
        assert "<title>Neo4j Browser</title>" in answer.read().decode()


def test_start_returns_once_the_browser_answers_on_the_ports_chosen(
        local: tuple[str, str], tmp_path: Path) -> None:
    """A fresh server on ports of its own: when `start` returns, Bolt and the Browser both
    answer at once (no retry), and it printed the Browser's address."""
    from tests.conftest import worker_number

    bolt, http = 7950 + worker_number(), 7850 + worker_number()
    ctl = [sys.executable, str(CHECKOUT / "neo4j" / "ctl.py")]
    home = ["--home", str(tmp_path / "neo4j")]
    try:
        started = subprocess.run([*ctl, "start", *home, "--bolt-port", str(bolt),
                                  "--http-port", str(http)], capture_output=True, text=True,
                                 timeout=240, check=False)
        assert started.returncode == 0, started.stderr
        with urllib.request.urlopen(f"http://127.0.0.1:{http}/browser/", timeout=5) as page:
            assert page.status == 200
        assert f"Browser on http://127.0.0.1:{http}/browser/" in started.stderr
        assert started.stdout.splitlines()[0] == f"KERNEL_GRAPH=neo4j://127.0.0.1:{bolt}"
    finally:
        subprocess.run([*ctl, "stop", *home], capture_output=True, timeout=120, check=False)


def test_the_ports_are_options_of_make_and_each_option_is_explained() -> None:
    shown = subprocess.run(["make", "-n", "neo4j", "NEO4J_BOLT_PORT=7999", "NEO4J_HTTP_PORT=7998"],
                           cwd=CHECKOUT, capture_output=True, text=True, check=True).stdout
    assert "ctl.py start --bolt-port 7999 --http-port 7998" in shown
    helped = subprocess.run([sys.executable, str(CHECKOUT / "neo4j" / "ctl.py"), "--help"],
                            capture_output=True, text=True, check=True).stdout
    options = helped.split("\noptions:\n", 1)[1]
    for option in ("--home", "--bolt-port", "--http-port", "--if-available"):
        entry = options.split(f"\n  {option}", 1)[1].split("\n  -")[0]
        assert len(entry.split()) > 4, f"{option} has no help text"
    assert "Browser" in helped and "KERNEL_NEO4J_HEAP" in helped
