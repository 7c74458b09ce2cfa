"""A repository's dependencies, as its setup run installs them before its tests run.

They are read from ``requirements.txt`` at the repository's top, else from the
``[project] dependencies`` of its ``pyproject.toml`` (the project itself is not
installed). Every line must be a plain requirement: a name, extras, version specifiers
and markers. Anything pip would read as an instruction instead (an option such as
``-e``, ``-r`` or ``--index-url``, a URL, a path or an archive) is refused with its
reason and never reaches pip, so the index and what is fetched from it stay the
kernel's choice. The kernel and the sandbox both read this: the kernel puts the
requirements in the test run's ``setup``, the sandbox checks them again before pip sees
them. The cache key is the sha256 of the requirements as written here (canonical, one
a line), so comments and spacing do not change it.
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

REQUIREMENTS_FILE = "requirements.txt"
PYPROJECT_FILE = "pyproject.toml"
SETUP = "setup"  # the test run payload's key
_COMMENT = re.compile(r"(^|\s)#.*$")
_ARCHIVES = (".whl", ".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tar.xz", ".txz")


PLAIN_ONLY = ("keep only plain requirements (name, extras, versions, markers) there; the "
              "kernel installs them from KERNEL_REGISTRY_INDEX_URL")


class RequirementRefused(ValueError):
    """A line of a requirements source that is not a plain requirement, or a source that
    cannot be read at all; ``remedy`` says what to do about it."""

    def __init__(self, source: str, line: int | None, text: str, reason: str,
                 remedy: str = PLAIN_ONLY) -> None:
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {text!r} {reason}" if text else f"{where} {reason}")
        self.source, self.line, self.text, self.reason = source, line, text, reason
        self.remedy = remedy


def _unreadable(source: str, why: str) -> RequirementRefused:
    return RequirementRefused(source, None, "", why, remedy=(
        f"make {source} a UTF-8 text file (or remove it); the kernel reads the repository's "
        "requirements from it"))


@dataclass(frozen=True)
class Requirements:
    source: str  # the file they were read from
    lines: tuple[str, ...]  # canonical, in the file's order

    @property
    def sha256(self) -> str:
        return requirements_hash(self.lines)

    def payload(self) -> dict[str, Any]:
        """The test run's ``setup``: what to install and its cache key."""
        return {"source": self.source, "requirements": list(self.lines), "sha256": self.sha256}


def requirements_hash(lines: tuple[str, ...] | list[str]) -> str:
    return hashlib.sha256("".join(f"{line}\n" for line in lines).encode()).hexdigest()


def plain_requirement(text: str) -> str:
    """``text`` as a canonical requirement, or ValueError saying why it is not plain."""
    if text.startswith("-"):
        raise ValueError("is an option, not a requirement (options such as -e, -r and "
                         "--index-url are refused: the kernel chooses the index)")
    if re.search(r"\s--?[A-Za-z]", text):
        raise ValueError("carries an option (--hash and other per-requirement options are "
                         "not supported)")
    try:
        parsed = Requirement(text)
    except InvalidRequirement as exc:
        raise ValueError(f"is not a plain requirement (name, extras, versions, markers): "
                         f"{str(exc).splitlines()[0]}") from None
    if parsed.url is not None:
        raise ValueError("names a URL: only requirements fetched from the index are installed")
    if "/" in parsed.name or "\\" in parsed.name or parsed.name.lower().endswith(_ARCHIVES):
        raise ValueError("names a file: only requirements fetched from the index are installed")
    return str(parsed)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each requirement line: comments dropped, lines
    ending in a backslash joined to the next, blank ones skipped."""
    found: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = _COMMENT.sub("", raw).rstrip()
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        joined = (pending + line).strip()
        pending = ""
        if joined:
            found.append((start, joined))
    if pending.strip():
        found.append((start, pending.strip()))
    return found


def _checked(source: str, entries: list[tuple[int | None, str]]) -> Requirements:
    lines = []
    for number, text in entries:
        try:
            lines.append(plain_requirement(text))
        except ValueError as exc:
            raise RequirementRefused(source, number, text, str(exc)) from None
    return Requirements(source, tuple(lines))


def _pyproject(text: str) -> list[tuple[int | None, str]]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RequirementRefused(PYPROJECT_FILE, None, "", f"does not parse: {exc}",
                                 remedy=f"fix {PYPROJECT_FILE} so it is valid TOML") from None
    project = data.get("project")
    dependencies = project.get("dependencies", []) if isinstance(project, dict) else []
    if not isinstance(dependencies, list) or not all(isinstance(d, str) for d in dependencies):
        raise RequirementRefused(PYPROJECT_FILE, None, "[project] dependencies",
                                 "is not a list of strings")
    return [(None, str(d).strip()) for d in dependencies]


def read_requirements(files: Mapping[str, str | None]) -> Requirements | None:
    """The repository's requirements from its files (path -> text; None: a file whose
    text was not kept, binary, not UTF-8 or too large), None when it names none (then no
    setup runs); RequirementRefused on a line that is not plain, or on a source that is
    no text file (a folder by that name, or text that cannot be read): pip would read it
    differently, or not at all, so it is never passed over in silence."""
    for source in (REQUIREMENTS_FILE, PYPROJECT_FILE):
        if source in files:
            text = files[source]
            if text is None:
                raise _unreadable(source, "is not UTF-8 text (or is too large to read)")
            found = _checked(source, [(n, t) for n, t in _logical_lines(text)]
                             if source == REQUIREMENTS_FILE else _pyproject(text))
            return found if found.lines else None
        if any(path.startswith(f"{source}/") for path in files):
            raise _unreadable(source, "is a folder, not a file")
    return None


def source_on_disk(root: Path) -> RequirementRefused | None:
    """A requirements source at ``root`` that exists but is no regular file (a folder,
    even an empty one a snapshot does not list), else None."""
    for source in (REQUIREMENTS_FILE, PYPROJECT_FILE):
        path = root / source
        if path.is_file():
            return None
        if os.path.lexists(path):
            return _unreadable(source, "is a folder, not a file" if path.is_dir()
                               else "is not a regular file")
    return None


def checked_setup(setup: Mapping[str, Any]) -> list[str]:
    """A ``setup`` payload's requirements, each checked again (ValueError naming the first
    that is not plain, or a cache key that does not match them)."""
    lines = [str(line) for line in setup.get("requirements", [])]
    for line in lines:
        try:
            plain_requirement(line)
        except ValueError as exc:
            raise ValueError(f"{line!r} {exc}") from None
    if setup.get("sha256") != requirements_hash(lines):
        raise ValueError("the setup's sha256 is not the hash of its requirements")
    return lines


__all__ = ["PYPROJECT_FILE", "REQUIREMENTS_FILE", "SETUP", "RequirementRefused", "Requirements",
           "checked_setup", "plain_requirement", "read_requirements", "requirements_hash",
           "source_on_disk"]
