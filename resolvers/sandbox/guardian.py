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

It also holds the limits that belong to the sandbox as a whole rather than to one
process (rlimits are per process, or per uid): every ``interval`` seconds it adds up
the resident memory and the tasks of all the sandbox's processes, and the bytes and
entries of the workspace, and ends the sandbox at once when one is over its limit,
writing which to the ``notice`` descriptor. The same walk strips set-uid and set-gid
bits from anything in the workspace. A limit can be overshot by what the sandbox does
within one interval; the per-process rlimits bound that.

It runs as ``python -I -S guardian.py CONFIG`` with the standard library only: it
starts before anything else of the sandbox and must not import the kernel.
CONFIG is JSON: ``argv``, ``lifeline`` (fd), ``kernel`` (pid), ``uid`` (or null),
``limits`` (RLIMIT name -> [soft, hard]), ``pass_fds`` (descriptors bwrap's command
keeps, and the guardian closes once it started: the test supervisor's report pipe),
``notice`` (fd for the limit that ended the sandbox), ``account`` (``workspace``,
``memory_bytes``, ``tasks``, ``workspace_bytes``, ``workspace_files``, ``interval``).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import select
import signal
import stat
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
    return _by_parent().get(me, [])


def _by_parent() -> dict[int, list[int]]:
    """Every process on /proc, grouped by its parent's pid."""
    parents: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1:
            parents.setdefault(int(fields[1]), []).append(int(name))
    return parents


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


def _descendants(me: int) -> list[int]:
    """Every process below ``me``: from each task's ``children`` list where the kernel
    keeps one (a walk as long as the sandbox, not the host), else from all of /proc."""
    if not os.path.exists(f"/proc/{me}/task/{me}/children"):
        return _descendants_by_scan(me)
    found, frontier = [], [me]
    while frontier:
        pid = frontier.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                    children = [int(c) for c in handle.read().split()]
            except (OSError, ValueError):
                continue
            found += children
            frontier += children
    return found


def _descendants_by_scan(me: int) -> list[int]:
    parents = _by_parent()
    found, frontier = [], [me]
    while frontier:
        children = parents.get(frontier.pop(), [])
        found += children
        frontier += children
    return found


def _memory_and_tasks(pids: list[int]) -> tuple[int, int]:
    """Resident bytes and tasks (threads) of the given processes, summed."""
    page = os.sysconf("SC_PAGE_SIZE")
    resident = tasks = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm", "rb") as handle:
                resident += int(handle.read().split()[1]) * page
            tasks += len(os.listdir(f"/proc/{pid}/task"))
        except (OSError, IndexError, ValueError):
            continue
    return resident, tasks


def _workspace(root: str, max_files: int) -> tuple[int, int]:
    """Bytes allocated and entries in the workspace (never following a link), stopping
    once the entries pass ``max_files``; set-uid and set-gid bits are removed."""
    allocated = entries = 0
    stack = [root]
    while stack and entries <= max_files:
        try:
            scan = os.scandir(stack.pop())
        except OSError:
            continue
        with scan:
            for entry in scan:
                entries += 1
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                allocated += info.st_blocks * 512
                if info.st_mode & (stat.S_ISUID | stat.S_ISGID) and not entry.is_symlink():
                    _strip(entry.path, stat.S_IMODE(info.st_mode) & 0o1777)
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
    return allocated, entries


def _strip(path: str, mode: int) -> None:
    """Set ``mode`` on ``path`` without following a link: the sandbox may have swapped
    the file for a link to a host file since it was looked at."""
    try:
        os.chmod(path, mode, follow_symlinks=False)
        return
    except NotImplementedError:  # no fchmodat(AT_SYMLINK_NOFOLLOW) here: through a descriptor
        pass
    except OSError:
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fchmod(fd, mode)
    finally:
        os.close(fd)


def over_limit(account: dict[str, Any], me: int) -> dict[str, Any] | None:
    """The first whole-sandbox limit passed, with what was measured, or None."""
    memory, tasks = _memory_and_tasks(_descendants(me))
    if memory > account["memory_bytes"]:
        return {"limit": "memory", "measured": memory}
    if tasks > account["tasks"]:
        return {"limit": "processes", "measured": tasks}
    allocated, entries = _workspace(account["workspace"], account["workspace_files"])
    if allocated > account["workspace_bytes"]:
        return {"limit": "workspace_bytes", "measured": allocated}
    if entries > account["workspace_files"]:
        return {"limit": "workspace_files", "measured": entries}
    return None


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
    handed = tuple(int(fd) for fd in config.get("pass_fds", ()))
    bwrap = subprocess.Popen(  # the argv is built by runner.py
        config["argv"], env={"PATH": "/usr/bin:/bin"}, close_fds=True, pass_fds=handed,
        preexec_fn=lambda: _child_setup(config["limits"], me), **identity)
    for fd in handed:  # the kernel reads to EOF: the sandbox must hold the only writer
        os.close(fd)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the kernel sees EOF when bwrap, not the guardian, closes them
        os.dup2(devnull, fd)
    os.close(devnull)
    watched = os.pidfd_open(bwrap.pid)
    account, notice = config.get("account"), config.get("notice")
    interval = float(account["interval"]) if account else None
    while True:
        ready, _, _ = select.select([lifeline, watched], [], [], interval)
        if not ready and account:
            passed = over_limit(account, me)
            if passed is not None:
                sweep()
                if notice is not None:
                    with contextlib.suppress(OSError):
                        os.write(int(notice), json.dumps(passed).encode())
                _end_like(signal.SIGKILL)
            continue
        if watched in ready:
            _, status = os.waitpid(bwrap.pid, 0)
            sweep()
            _end_like(status)
        if lifeline in ready and os.read(lifeline, 1) == b"":
            sweep()
            _end_like(signal.SIGKILL)  # a raw status of 9: killed by SIGKILL


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
