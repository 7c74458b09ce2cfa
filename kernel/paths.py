"""Locations of the files the kernel ships: named Cypher statements and seed graphs.

In a source checkout they sit at the repository root (``cypher/``, ``seeds/``);
in an installed wheel they are bundled under ``kernel/_bundled``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kernel.errors import ConfigError

_PACKAGE = Path(__file__).resolve().parent


def _shipped(name: str) -> Path:
    bundled = _PACKAGE / "_bundled" / name
    if bundled.is_dir():
        return bundled
    return _PACKAGE.parent / name


def cypher_dir() -> Path:
    return _shipped("cypher")


def seeds_dir() -> Path:
    return _shipped("seeds")


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) readable by its owner only. The data dir, the
    store's files, artifacts and the embedding cache live in such directories.

    An existing directory of ours is closed to others too when it is empty (made for the
    kernel). One that already holds anything keeps its mode: it may be a directory the
    person shares (a project, a home, ``/`` as root), and what the kernel writes there is
    private file by file. A shared directory (the sticky bit, as on ``/tmp``) is refused:
    others can put files in it, such as a link where the store's config will be written.
    """
    try:
        missing = [p for p in [path, *path.parents] if not p.exists()]
        for folder in reversed(missing):
            folder.mkdir(mode=0o700, exist_ok=True)
        if not path.is_dir():
            raise NotADirectoryError(20, "it is a file, not a directory")
        found = path.stat()
        if found.st_mode & stat.S_ISVTX:
            raise PermissionError(13, "it is shared: others may create files in it; name a "
                                      "directory of its own inside it")
        if found.st_uid == os.geteuid() and not missing and not any(path.iterdir()):
            os.chmod(path, 0o700)
    except OSError as exc:  # a file in the way, no permission, a read-only disk
        raise ConfigError(f"cannot use {path} as a directory ({exc.strerror}): choose one you "
                          "can write with --data-dir or KERNEL_DATA_DIR") from None
    return path


def private_file(path: Path) -> Path:
    """Close an existing file of ours to others."""
    if path.exists() and path.stat().st_uid == os.geteuid():
        os.chmod(path, path.stat().st_mode & 0o700)
    return path
