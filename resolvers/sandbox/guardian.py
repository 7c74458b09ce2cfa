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
the memory of all the sandbox's processes (resident, what its tmpfs mounts hold, what
its open sockets and pipes can buffer), their tasks, and the bytes and entries of the
workspace (unlinked files still open or mapped included), and ends the sandbox at once
when one is over its limit,
writing which to the ``notice`` descriptor. The same walk strips set-uid and set-gid
bits from anything in the workspace. A limit can be overshot by what the sandbox does
within one interval; the per-process rlimits bound that.

It runs as ``python -I -S guardian.py CONFIG`` with the standard library only: it
starts before anything else of the sandbox and must not import the kernel.
CONFIG is JSON: ``argv``, ``lifeline`` (fd), ``kernel`` (pid), ``uid`` (or null),
``limits`` (RLIMIT name -> [soft, hard]), ``pass_fds`` (descriptors bwrap's command
keeps, and the guardian closes once it started: the test supervisor's report pipe),
``notice`` (fd for the limit that ended the sandbox), ``account`` (``workspace``,
``memory_bytes``, ``tasks``, ``workspace_bytes``, ``workspace_files``, ``interval``,
``tmpfs``, ``file_bytes``, ``charges``), ``keyctl`` (the system call's number, or null).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
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
_KEYCTL_JOIN_SESSION_KEYRING = 1
_LIBC = ctypes.CDLL(None, use_errno=True)


def _child_setup(limits: dict[str, list[int]], guardian: int, keyctl: int | None) -> None:
    """In bwrap's process before exec: die with the guardian, leave the caller's session
    keyring for a new empty one, then take the limits."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != guardian:
        os._exit(1)
    if keyctl is not None and _LIBC.syscall(keyctl, _KEYCTL_JOIN_SESSION_KEYRING, None) < 0 \
            and ctypes.get_errno() not in (errno.ENOSYS, errno.EPERM):
        os._exit(1)  # keyrings exist and work here, yet no fresh one: start nothing
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


def _tmpfs_used(pids: list[int], mounts: list[str]) -> int:
    """Bytes held in the sandbox's own tmpfs mounts, read through the root of one of its
    processes (a tmpfs keeps what is written, unlinked files included, in memory that is
    no process's resident memory)."""
    own = os.readlink("/proc/self/ns/mnt")
    for pid in pids:
        try:
            if os.readlink(f"/proc/{pid}/ns/mnt") == own:
                continue  # bubblewrap's outer process, still in the host's mounts
            used = 0
            for mount in mounts:
                if _host_filesystem(pid, mount):
                    continue  # not mounted yet: bubblewrap is still building the sandbox
                info = os.statvfs(f"/proc/{pid}/root{mount}")
                used += (info.f_blocks - info.f_bfree) * info.f_frsize
            return used
        except OSError:
            continue
    return 0


def _host_filesystem(pid: int, mount: str) -> bool:
    """Whether ``mount`` seen from ``pid`` is still the host's own filesystem there: a
    process that has its own mounts but has not yet had the sandbox's tmpfs mounted
    (bubblewrap between unsharing and pivoting, a window that grows under load) sees the
    host's, and what the host's disk holds is no memory of the sandbox's."""
    try:
        return os.stat(f"/proc/{pid}/root{mount}").st_dev == os.stat(mount).st_dev
    except OSError:
        return False


def _unix_inodes(pid: int) -> set[str]:
    """Inodes of the unix sockets in the sandbox's network namespace."""
    try:
        with open(f"/proc/{pid}/net/unix", "rb") as handle:
            return {line.split()[6].decode() for line in handle.read().splitlines()[1:]
                    if len(line.split()) > 6}
    except OSError:
        return set()


def _descriptors(pids: list[int], account: dict[str, Any]) -> tuple[int, int]:
    """What the sandbox's open descriptors can hold outside any process: every socket and
    pipe charged at the most its buffers take, and the bytes of workspace files that are
    unlinked but still open (or mapped) and so invisible to the walk."""
    charges, held, seen = account["charges"], 0, set()
    device = os.stat(account["workspace"]).st_dev
    hidden: dict[int, int] = {}
    unix: set[str] | None = None
    for pid in pids:
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for name in names:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{name}")
            except OSError:
                continue
            if target.startswith(("socket:[", "pipe:[")) and target not in seen:
                seen.add(target)
                if target.startswith("pipe:["):
                    held += charges["pipe"]
                    continue
                unix = _unix_inodes(pid) if unix is None else unix
                held += charges["unix"] if target[8:-1] in unix else charges["socket"]
            elif target.endswith(" (deleted)"):
                with contextlib.suppress(OSError):
                    info = os.stat(f"/proc/{pid}/fd/{name}")
                    if info.st_dev == device and info.st_nlink == 0:
                        hidden[info.st_ino] = info.st_blocks * 512
        _deleted_mappings(pid, device, account["file_bytes"], hidden)
    return held, sum(hidden.values())


def _deleted_mappings(pid: int, device: int, file_bytes: int, hidden: dict[int, int]) -> None:
    """Workspace files mapped after being unlinked and closed: their size cannot be read
    without privileges, so each is charged the most a file may hold (RLIMIT_FSIZE)."""
    wanted = f"{os.major(device):02x}:{os.minor(device):02x}"
    try:
        with open(f"/proc/{pid}/maps", "rb") as handle:
            lines = handle.read().decode(errors="replace").splitlines()
    except OSError:
        return
    for line in lines:
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[3] == wanted and fields[5].endswith("(deleted)"):
            hidden.setdefault(int(fields[4]), file_bytes)


def _workspace(root: str, max_files: int) -> tuple[int, int]:
    """Bytes allocated and entries in the workspace, stopping once the entries pass
    ``max_files``. The walk goes by directory descriptor (no path grows past PATH_MAX),
    never follows a link, opens again any folder its owner closed (mode 0300, 0600), and
    removes set-uid and set-gid bits."""
    totals = [0, 0]
    top = _open_dir(root, None)
    if top is None:
        return 0, 0
    levels = [(top, _scan(top, totals))]
    try:
        while levels and totals[1] <= max_files:
            fd, pending = levels[-1]
            if not pending:
                os.close(levels.pop()[0])
                continue
            child = _open_dir(pending.pop(), fd)
            if child is not None:
                levels.append((child, _scan(child, totals)))
    finally:
        for fd, _ in levels:
            os.close(fd)
    return totals[0], totals[1]


def _scan(fd: int, totals: list[int]) -> list[str]:
    """Count one folder's entries into ``totals``; its sub-folders' names."""
    folders = []
    try:
        with os.scandir(fd) as scan:
            for entry in scan:
                totals[1] += 1
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                totals[0] += info.st_blocks * 512
                if info.st_mode & (stat.S_ISUID | stat.S_ISGID) and \
                        not stat.S_ISLNK(info.st_mode):
                    _strip(fd, entry.name, stat.S_IMODE(info.st_mode) & 0o1777)
                if stat.S_ISDIR(info.st_mode):
                    folders.append(entry.name)
    except OSError:
        pass
    return folders


_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def _open_dir(name: str, parent: int | None) -> int | None:
    """A descriptor for the folder ``name`` (never through a link); a folder its owner
    cannot list or search is given back ``u+rwx`` first (the guardian is its owner, or
    root)."""
    try:
        handle = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC,
                         dir_fd=parent)
    except OSError:
        return None
    try:
        mode = stat.S_IMODE(os.fstat(handle).st_mode)
        if os.geteuid() != 0 and mode & 0o700 != 0o700:
            os.chmod(f"/proc/self/fd/{handle}", mode | 0o700)
        return os.open(f"/proc/self/fd/{handle}", _DIR)
    except OSError:
        return None
    finally:
        os.close(handle)


def _strip(parent: int, name: str, mode: int) -> None:
    """Set ``mode`` on ``name`` without following a link: the sandbox may have swapped
    the file for a link to a host file since it was looked at (a link's own mode cannot
    be changed, so the chmod then fails harmlessly)."""
    try:
        handle = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    except OSError:
        return
    try:
        if not stat.S_ISLNK(os.fstat(handle).st_mode):
            os.chmod(f"/proc/self/fd/{handle}", mode)
    except OSError:
        pass
    finally:
        os.close(handle)


def over_limit(account: dict[str, Any], me: int) -> dict[str, Any] | None:
    """The first whole-sandbox limit passed, with what was measured, or None. Memory is
    resident memory, plus what the sandbox's tmpfs mounts hold, plus the most its sockets
    and pipes can buffer; workspace bytes include unlinked files still open or mapped."""
    pids = _descendants(me)
    resident, tasks = _memory_and_tasks(pids)
    buffered, hidden = _descriptors(pids, account)
    memory = resident + buffered + _tmpfs_used(pids, account.get("tmpfs", []))
    if memory > account["memory_bytes"]:
        return {"limit": "memory", "measured": memory}
    if tasks > account["tasks"]:
        return {"limit": "processes", "measured": tasks}
    allocated, entries = _workspace(account["workspace"], account["workspace_files"])
    if allocated + hidden > account["workspace_bytes"]:
        return {"limit": "workspace_bytes", "measured": allocated + hidden}
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
    _, most = resource.getrlimit(resource.RLIMIT_NOFILE)  # the walk holds one per depth
    resource.setrlimit(resource.RLIMIT_NOFILE, (most, most))
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
        preexec_fn=lambda: _child_setup(config["limits"], me, config.get("keyctl")), **identity)
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
