"""Locations of the files the kernel ships: named Cypher statements and seed graphs.

In a source checkout they sit at the repository root (``cypher/``, ``seeds/``);
in an installed wheel they are bundled under ``kernel/_bundled``.
"""

from __future__ import annotations

from pathlib import Path

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
