"""The kernel's test supervisor inside the sandbox (``python3 -I -S``, standard library
only). It never imports the workspace: it starts ``pytest_child.py``, which does, and
writes the verdicts to the one descriptor the kernel handed it.

Why two processes: the code under test runs inside the child and can do anything the
child can, including rewrite files and choose its exit status. The kernel's channel
(``argv[1]``, a pipe) is held by this supervisor only: the child is started without it,
and this process makes itself non-dumpable first, so the child can neither ptrace it
nor open its descriptors through ``/proc``. The child streams one JSON line per test
phase the moment pytest reports it, over a pipe of its own; what the code under test
does later (an ``atexit`` hook, ``os._exit``) cannot take a recorded phase back, and a
phase reported twice marks the whole report as tampered with.
"""

import contextlib
import ctypes
import hashlib
import hmac
import json
import os
import select
import signal
import subprocess
import sys
from typing import Any

PR_SET_DUMPABLE = 4
RECORDS_LIMIT = 4 << 20  # bytes of phase records read from the child
TEST_PHASES = ("setup", "call", "teardown")


def main(report_fd: int, tests: list[str]) -> int:
    for number in signal.valid_signals():  # the namespace's init ignores every signal
        with contextlib.suppress(OSError, ValueError):  # sent from inside while it has
            signal.signal(number, signal.SIG_DFL)  # no handler (SIGINT, SIGTERM, ...)
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        return _send(report_fd, {"error": "the test supervisor could not protect itself"}, 125)
    os.set_inheritable(report_fd, False)
    key = os.urandom(32)
    key_read, key_write = os.pipe()
    os.write(key_write, key)
    os.close(key_write)
    read_end, write_end = os.pipe()
    child = subprocess.Popen(
        [sys.executable, "-I", "-S", "/usr/lib/kernel-runtime/pytest_child.py",
         str(write_end), str(key_read), *tests], pass_fds=(write_end, key_read),
        close_fds=True)
    os.close(write_end)
    os.close(key_read)
    data, overflow = bytearray(), False

    def take(chunk: bytes) -> None:
        nonlocal overflow
        if len(data) + len(chunk) > RECORDS_LIMIT:
            overflow = True
        else:
            data.extend(chunk)

    # Until the runner ends: a process it left behind (a daemon the tested code
    # started) may hold the pipe open, and must not keep the verdict waiting.
    ended = os.pidfd_open(child.pid)
    while True:
        ready, _, _ = select.select([read_end, ended], [], [])
        if read_end in ready:
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            take(chunk)
        elif ended in ready:
            os.set_blocking(read_end, False)
            with contextlib.suppress(BlockingIOError):
                while chunk := os.read(read_end, 65536):
                    take(chunk)
            break
    status = child.wait()
    code = status if status >= 0 else 128 - status
    if overflow:
        return _send(report_fd, {"error": f"the test run reported more than "
                                          f"{RECORDS_LIMIT} bytes of verdicts"}, code)
    return _send(report_fd, fold(data.decode("utf-8", "replace").splitlines(), key), code)


FORGED = {"error": "the test run's verdict stream was forged: a record does not carry the "
                   "run's mark (written by the tested code, not the runner)"}
MALFORMED = {"error": "the test run's verdict stream is not what the runner writes"}


def _checked(line: str, place: int, key: bytes) -> tuple[str, str, str] | dict[str, str]:
    """The record's fields when it is the runner's, at its place, with its mark."""
    try:
        record = json.loads(line)
        fields = (record["node"], record["when"], record["outcome"])
    except (ValueError, KeyError, TypeError):
        return MALFORMED
    mark = record.get("mac")
    if not all(isinstance(v, str) for v in fields):
        return MALFORMED
    if not isinstance(mark, str):
        return FORGED
    expected = hmac.new(key, json.dumps([place, *fields]).encode(), hashlib.sha256)
    if record.get("seq") != place or not hmac.compare_digest(expected.hexdigest(), mark):
        return FORGED
    return fields


def fold(lines: list[str], key: bytes) -> dict[str, Any]:
    """Each test's outcome from its phases, pytest's way: a failed call fails the test,
    a failed setup or teardown (or collection) is an error, a skip is a skip. Every
    record must carry the run's mark and come at its place."""
    seen: set[tuple[str, str]] = set()
    phases: dict[str, dict[str, str]] = {}
    finished = False
    for place, line in enumerate(lines):
        checked = _checked(line, place, key)
        if isinstance(checked, dict):
            return checked
        node, when, outcome = checked
        if (node, when) in seen:
            return {"error": f"the test run reported {node or 'its end'} ({when}) twice: "
                             "the report was tampered with"}
        seen.add((node, when))
        if (node, when, outcome) == ("", "session", "finished"):
            finished = True
            continue
        if finished or when not in (*TEST_PHASES, "collect") or \
                outcome not in ("passed", "failed", "skipped"):
            return MALFORMED
        phases.setdefault(node, {})[when] = outcome
    if not finished:
        return {"error": "the test run ended before pytest finished: it wrote no report"}
    tests = {node: _outcome(p) for node, p in phases.items()}
    return {"tests": dict(sorted(tests.items()))}


def _outcome(phases: dict[str, str]) -> str:
    if phases.get("collect") == "failed":
        return "error"
    if phases.get("call") == "failed":
        return "failed"
    if "failed" in (phases.get("setup"), phases.get("teardown")):
        return "error"
    if "skipped" in phases.values():
        return "skipped"
    return "passed"


def _send(report_fd: int, report: dict[str, Any], code: int) -> int:
    data = json.dumps(report).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(report_fd, view):]
    os.close(report_fd)
    return code


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), sys.argv[2:]))
