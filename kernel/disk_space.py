"""A full disk, said as such: which filesystem, how much is free, how much is needed.

Whether the kernel's own write fails (``ENOSPC``, ``EDQUOT``) or the embedded store exits
because it cannot append to its journal, the person reads one line naming the
filesystem and what to do; the run stands at its last commit (exit 3) and
``kernel resume`` continues it once there is room.

>>> human_bytes(3 * 1024 * 1024)
'3.0 MiB'
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

STORE_HEADROOM = 64 << 20  # what the embedded store is given to append and rewrite its journal
_FULL = (errno.ENOSPC, errno.EDQUOT)
_SQLITE_FULL = 13
_STORE_LOG_SIGNS = ("No space left on device", "Disk quota exceeded", "AOF write error",
                    "writing to the AOF")


@dataclass(frozen=True)
class Shortage:
    """A write that failed for want of space; ``path`` when the error names it."""

    path: Path | None


def out_of_space(exc: BaseException) -> Shortage | None:
    """The shortage behind ``exc`` (itself, its cause or its context): an ``ENOSPC`` or
    ``EDQUOT`` OSError, or SQLite's "database or disk is full" (the embedding cache)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _FULL:
            named = current.filename
            return Shortage(Path(os.fsdecode(named)) if named is not None else None)
        if getattr(current, "sqlite_errorcode", None) == _SQLITE_FULL:
            return Shortage(None)
        current = current.__cause__ or current.__context__
    return None


def store_log_says_full(lines: list[str]) -> bool:
    """Whether the embedded server's last log lines say it stopped for want of space."""
    return any(sign in line for line in lines for sign in _STORE_LOG_SIGNS)


def mount_point(path: Path) -> Path:
    """The mount point of the filesystem holding ``path`` (or its nearest ancestor)."""
    path = _existing(path.resolve())
    device = path.stat().st_dev
    while path.parent != path and path.parent.stat().st_dev == device:
        path = path.parent
    return path


def free_bytes(path: Path) -> int:
    info = os.statvfs(_existing(path.resolve()))
    return info.f_bavail * info.f_frsize


def full_message(path: Path, needed: int, what: str) -> str:
    """``what`` cannot write under ``path``: the filesystem, its free space, the need."""
    try:
        where, free = mount_point(path), free_bytes(path)
    except OSError:
        return (f"{what} cannot write to {path}: its filesystem is full; free at least "
                f"{human_bytes(needed)} there")
    return (f"{what} cannot write to {path}: the filesystem mounted at {where} is full "
            f"({human_bytes(free)} free, at least {human_bytes(needed)} needed); free space "
            "there or move the data dir (KERNEL_DATA_DIR)")


def human_bytes(count: int) -> str:
    value = float(count)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{count} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _existing(path: Path) -> Path:
    while not path.exists() and path.parent != path:
        path = path.parent
    return path
