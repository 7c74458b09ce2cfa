"""Stands between the kernel and bubblewrap so that no sandboxed process outlives the kernel.

bubblewrap arms ``--die-with-parent`` in its inner process only once the whole mount
layout is built. A kernel killed in that window (SIGKILL, OOM) takes the outer bwrap
with it (parent-death signal), but the inner process is orphaned and goes on to run
the command. This guardian closes that window:

* it is a child subreaper, so every orphan of the sandbox is re-parented to it, not
  to init;
* it holds the read end of a lifeline pipe whose write end only the kernel holds; the
  end of the kernel, however it ends, closes the pipe;
* on that, or when bwrap ends, it kills every child it has until none is left, then
  ends as bwrap ended (same exit code or same signal).

It runs as ``python -I -S guardian.py CONFIG`` with the standard library only: it
starts before anything else of the sandbox and must not import the kernel.
CONFIG is JSON: ``argv``, ``lifeline`` (fd), ``kernel`` (pid), ``uid`` (or null),
``limits`` (RLIMIT name -> [soft, hard]).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import select
import signal
import subprocess
import sys
from typing import Any

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_LIBC = ctypes.CDLL(None, use_errno=True)


def _child_setup(limits: dict[str, list[int]], guardian: int) -> None:
    """In bwrap's process before exec: die with the guardian, then take the limits."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != guardian:
        os._exit(1)
    for name, (soft, hard) in limits.items():
        resource.setrlimit(getattr(resource, name), (soft, hard))


def _children(me: int) -> list[int]:
    """Pids whose parent is ``me`` (read from /proc: orphans adopted by the subreaper
    are not known to subprocess)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(name))
    return found


def sweep() -> None:
    """Kill every child, reap it, and repeat for the orphans its end hands over."""
    me = os.getpid()
    while True:
        for pid in _children(me):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _end_like(status: int) -> None:
    """Exit as bwrap exited, so the kernel reads its status unchanged."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def _lifeline_closed(fd: int) -> bool:
    ready, _, _ = select.select([fd], [], [], 0)
    return bool(ready) and os.read(fd, 1) == b""


def main(config: dict[str, Any]) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a re-raised SIGXCPU dumps nothing
    if _LIBC.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.stderr.write("sandbox guardian: cannot become a child subreaper\n")
        os._exit(126)
    lifeline = int(config["lifeline"])
    if os.getppid() != int(config["kernel"]) or _lifeline_closed(lifeline):
        os._exit(1)  # the kernel is already gone: start nothing
    uid = config["uid"]
    identity: dict[str, Any] = {} if uid is None else \
        {"user": uid, "group": uid, "extra_groups": []}
    me = os.getpid()
    bwrap = subprocess.Popen(  # the argv is built by runner.py
        config["argv"], env={"PATH": "/usr/bin:/bin"}, close_fds=True,
        preexec_fn=lambda: _child_setup(config["limits"], me), **identity)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the kernel sees EOF when bwrap, not the guardian, closes them
        os.dup2(devnull, fd)
    os.close(devnull)
    watched = os.pidfd_open(bwrap.pid)
    while True:
        ready, _, _ = select.select([lifeline, watched], [], [])
        if watched in ready:
            _, status = os.waitpid(bwrap.pid, 0)
            sweep()
            _end_like(status)
        if lifeline in ready and os.read(lifeline, 1) == b"":
            sweep()
            _end_like(signal.SIGKILL)  # a raw status of 9: killed by SIGKILL


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
