"""Edits to a repository, anchored by content hashes rather than line numbers alone.

An edit names one file by its path in the repository, the sha256 the file must have
before it (none: the file must not exist yet) and the sha256 it has after, and carries
either a unified diff or the file's whole new text. A set of edits is checked whole
before anything is written: one refused edit leaves every file as it was, and each
refusal carries a reason code, never a guess at what was meant.

Diffs are applied by ``git apply``, one file at a time, in a scratch directory outside
any repository: the tool a user will apply the delivered patch with, so "it applied
here" and "``git apply --check`` accepts it" are the same judgment, with git's handling
of context, offsets and missing final newlines rather than a parser of our own.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

MAX_EDIT_BYTES = 1_000_000  # a diff or replacement larger than this is refused unread


class EditReason(StrEnum):
    """Why an edit was refused."""

    TOO_LARGE = "edit_too_large"
    BAD_PATH = "path_not_relative"
    OUTSIDE = "path_outside_repository"
    GIT_DIR = "path_in_git_directory"
    SYMLINK_OUT = "symlink_outside_repository"
    NOT_A_FILE = "not_a_regular_file"
    DUPLICATE = "path_edited_twice"
    BEFORE_HASH = "before_hash_mismatch"
    AFTER_HASH = "after_hash_mismatch"
    OTHER_FILE = "diff_names_another_file"
    NO_APPLY = "diff_does_not_apply"


class FileEdit(BaseModel):
    """One file's change: a unified diff (``kind="diff"``) or its whole new text
    (``kind="replace"``), anchored by the file's hash before and after."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    kind: Literal["diff", "replace"]
    before_sha256: str | None
    after_sha256: str
    diff: str | None = None
    content: str | None = None

    @model_validator(mode="after")
    def _body_matches_kind(self) -> FileEdit:
        if self.kind == "diff" and (self.diff is None or self.content is not None):
            raise ValueError("a diff edit carries `diff` and no `content`")
        if self.kind == "replace" and (self.content is None or self.diff is not None):
            raise ValueError("a replace edit carries `content` and no `diff`")
        return self

    def body(self) -> str:
        return self.diff if self.kind == "diff" else self.content  # type: ignore[return-value]


@dataclass(frozen=True)
class Refusal:
    path: str
    reason: EditReason
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason.value, "detail": self.detail}


@dataclass(frozen=True)
class EditOutcome:
    """What a set of edits did: every path written, or (and then nothing was written)
    every refusal."""

    written: tuple[str, ...]
    refusals: tuple[Refusal, ...]

    @property
    def applied(self) -> bool:
        return not self.refusals


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _target(root: Path, shown: str) -> Path | Refusal:
    """The file ``shown`` names under ``root``, or why it may not be edited."""
    pure = PurePosixPath(shown)
    if not shown or "\\" in shown or "\0" in shown or pure.is_absolute() or \
            any(part in ("", ".") for part in shown.split("/")):
        return Refusal(shown, EditReason.BAD_PATH, "name the file by a plain relative path "
                       "with forward slashes, as the repository map shows it")
    if ".." in pure.parts:
        return Refusal(shown, EditReason.OUTSIDE, "the path leaves the repository; edit only "
                       "files under its top directory")
    if ".git" in pure.parts:
        return Refusal(shown, EditReason.GIT_DIR, "files under .git/ are git's, not the code's")
    walked = root
    for part in pure.parts:
        walked = walked / part
        if walked.is_symlink() and not walked.resolve().is_relative_to(root):
            return Refusal(shown, EditReason.SYMLINK_OUT, f"{walked.relative_to(root)} is a "
                           "symlink out of the repository")
    if walked.exists() and not walked.resolve().is_file():
        return Refusal(shown, EditReason.NOT_A_FILE, "the path is not a regular file")
    return walked.resolve() if walked.exists() else walked


def _git_apply(shown: str, before: bytes | None, diff: str) -> bytes | Refusal:
    """``before`` with ``diff`` applied by ``git apply``, in a scratch directory where git
    finds no repository; the diff must name ``shown`` and no other file."""
    with tempfile.TemporaryDirectory(prefix="kernel-edit-") as scratch:
        work = Path(scratch) / "tree"
        (work / shown).parent.mkdir(parents=True, exist_ok=True)
        if before is not None:
            (work / shown).write_bytes(before)
        patch = Path(scratch) / "edit.patch"
        patch.write_text(diff)
        env = {**os.environ, "GIT_CEILING_DIRECTORIES": scratch, "LC_ALL": "C"}

        def git(*args: str) -> subprocess.CompletedProcess[bytes]:
            return subprocess.run(["git", "apply", *args, str(patch)], cwd=work, env=env,
                                  capture_output=True, check=False, timeout=60)

        listed = git("--numstat", "-z")
        if listed.returncode != 0:
            return Refusal(shown, EditReason.NO_APPLY, _first_line(listed.stderr))
        names = [f.split(b"\t")[-1].decode("utf-8", "replace")
                 for f in listed.stdout.split(b"\0") if f]
        if names != [shown]:
            return Refusal(shown, EditReason.OTHER_FILE, f"the diff names {names}; one edit "
                           f"changes one file, with headers --- a/{shown} and +++ b/{shown}")
        done = git()
        if done.returncode != 0:
            return Refusal(shown, EditReason.NO_APPLY, _first_line(done.stderr))
        return (work / shown).read_bytes()


def _first_line(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[0] if lines else "git apply refused the diff"


def _checked(root: Path, edit: FileEdit, max_bytes: int) -> tuple[Path, bytes] | Refusal:
    """The file to write and its new bytes, or why the edit is refused."""
    size = len(edit.body().encode())
    if size > max_bytes:
        return Refusal(edit.path, EditReason.TOO_LARGE, f"{size:,} bytes, over the cap of "
                       f"{max_bytes:,}; split the change or send a smaller diff")
    target = _target(root, edit.path)
    if isinstance(target, Refusal):
        return target
    before = target.read_bytes() if target.exists() else None
    found = sha256_of(before) if before is not None else None
    if found != edit.before_sha256:
        return Refusal(edit.path, EditReason.BEFORE_HASH, f"the file's sha256 is {found} "
                       "(none: it does not exist), not the one the edit was made against")
    after = edit.content.encode() if edit.content is not None else \
        _git_apply(edit.path, before, edit.diff or "")
    if isinstance(after, Refusal):
        return after
    if sha256_of(after) != edit.after_sha256:
        return Refusal(edit.path, EditReason.AFTER_HASH, f"the edited file's sha256 is "
                       f"{sha256_of(after)}, not the after_sha256 the edit names")
    return target, after


def apply_edits(root: Path, edits: list[FileEdit],
                max_bytes: int = MAX_EDIT_BYTES) -> EditOutcome:
    """Apply ``edits`` to the tree at ``root`` (a snapshot's copy), all or none."""
    base = root.resolve()
    planned: list[tuple[Path, bytes]] = []
    refusals: list[Refusal] = []
    seen: set[str] = set()
    for edit in edits:
        if edit.path in seen:
            refusals.append(Refusal(edit.path, EditReason.DUPLICATE, "give one edit per file"))
            continue
        seen.add(edit.path)
        checked = _checked(base, edit, max_bytes)
        if isinstance(checked, Refusal):
            refusals.append(checked)
        else:
            planned.append(checked)
    if refusals:
        return EditOutcome(written=(), refusals=tuple(refusals))
    for target, data in planned:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return EditOutcome(written=tuple(e.path for e in edits), refusals=())


__all__ = ["MAX_EDIT_BYTES", "EditOutcome", "EditReason", "FileEdit", "Refusal",
           "apply_edits", "sha256_of"]
