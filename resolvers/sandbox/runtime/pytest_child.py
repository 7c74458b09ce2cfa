"""The process that runs pytest, and so the code under test, inside the sandbox (started
by ``pytest_launcher.py`` as ``python3 -I -S``, so no sitecustomize, .pth file or
workspace module is loaded before it).

pytest and everything it reports with are imported before the workspace joins
``sys.path``, and the workspace is appended (after the repository's installed
dependencies, when it has them), never prepended, so a proposal's files cannot
replace them. Conftest files, the workspace's ini files and plugin auto-loading are off.
Each test phase is written to ``argv[1]`` (a pipe to the supervisor) as soon as pytest
reports it, and a last record once the session finished. Every record carries its place
in the stream and an HMAC under the run's key, read from ``argv[2]`` and that descriptor
closed before any code of the workspace can run: a record written by the tested code to
a descriptor it holds carries no valid mark, and the supervisor refuses the stream.
"""

import hashlib
import hmac
import itertools
import json
import os
import sys


def _signer(key_fd: int):  # type: ignore[no-untyped-def]
    """Marks records with the run's key; the key itself is kept by nothing but this
    closure's HMAC state."""
    key = bytearray(os.read(key_fd, 64))
    os.close(key_fd)
    base = hmac.new(bytes(key), digestmod=hashlib.sha256)
    key[:] = bytes(len(key))
    places = itertools.count()

    def sign(node: str, when: str, outcome: str) -> bytes:
        place = next(places)
        mac = base.copy()
        mac.update(json.dumps([place, node, when, outcome]).encode())
        return (json.dumps({"seq": place, "node": node, "when": when, "outcome": outcome,
                            "mac": mac.hexdigest()}) + "\n").encode()
    return sign


RECORDS = int(sys.argv[1])
_SIGN = _signer(int(sys.argv[2]))

os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
sys.path.append("/usr/lib/kernel-site")

import pytest  # noqa: E402


def _write(node: str, when: str, outcome: str) -> None:
    view = memoryview(_SIGN(node, when, outcome))
    while view:
        view = view[os.write(RECORDS, view):]


class PhaseRecorder:
    """Streams every phase's outcome; collection errors become the file's error."""

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        _write(report.nodeid, report.when, report.outcome)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            _write(report.nodeid, "collect", "failed")

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        _write("", "session", "finished")  # pytest ran to its end


if os.path.isdir("/usr/lib/kernel-deps"):  # the repository's dependencies, when installed
    sys.path.append("/usr/lib/kernel-deps")
sys.path.append("/workspace")
sys.exit(pytest.main([
    "-c", "/usr/lib/kernel-runtime/pytest.ini", "--rootdir=/workspace", "--noconftest",
    "-p", "no:cacheprovider", "-p", "no:junitxml", "--import-mode=append", "-q", "-rA",
    "--", *sys.argv[3:]], plugins=[PhaseRecorder()]))
