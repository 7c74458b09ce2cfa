"""Locations of the files the kernel ships: named Cypher statements and seed graphs.

In a source checkout they sit at the repository root (``cypher/``, ``seeds/``);
in an installed wheel they are bundled under ``kernel/_bundled``.
"""

from __future__ import annotations

import os
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
    """Create ``path`` (and missing parents) readable by its owner only; an existing one
    of ours is closed to others too. The data dir, the store's files, artifacts and the
    embedding cache live in such directories."""
    try:
        missing = [p for p in [path, *path.parents] if not p.exists()]
        for folder in reversed(missing):
            folder.mkdir(mode=0o700, exist_ok=True)
        if not path.is_dir():
            raise NotADirectoryError(20, "it is a file, not a directory")
        if path.stat().st_uid == os.geteuid():
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
