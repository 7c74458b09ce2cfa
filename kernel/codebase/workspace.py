"""A repository goal's working copy: the snapshot a run started from, checked again on
resume and replay, its files with a set of edits applied (in a scratch copy, never the
user's tree), and the patch those edits make, written by git so that ``git apply``
takes it back."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from kernel.codebase.edits import MAX_EDIT_BYTES, FileEdit, Refusal, apply_edits
from kernel.codebase.snapshot import Caps, Snapshot, take_snapshot
from kernel.errors import ConfigError


def checked_snapshot(root: str, tree_hash: str, caps: Caps) -> Snapshot:
    """The repository at ``root`` as it was when the run started, or one line saying it
    changed since (a run works on one tree; resume and replay need the same one)."""
    snapshot = take_snapshot(Path(root), caps)
    if snapshot.tree_hash != tree_hash:
        raise ConfigError(f"the repository at {root} changed since the run started (tree hash "
                          f"{tree_hash[:12]}, now {snapshot.tree_hash[:12]}); restore it "
                          "(git stash) or start a new run")
    return snapshot


def _copy_text_files(snapshot: Snapshot, into: Path) -> None:
    for f in snapshot.files:
        if f.text is not None:
            (into / f.path).parent.mkdir(parents=True, exist_ok=True)
            (into / f.path).write_text(f.text)


def edited_files(snapshot: Snapshot, edits: list[FileEdit],
                 max_bytes: int = MAX_EDIT_BYTES) -> dict[str, str] | list[Refusal]:
    """The snapshot's text files (path -> text) with ``edits`` applied to a scratch copy,
    or the refusals (then nothing was applied)."""
    with tempfile.TemporaryDirectory(prefix="kernel-repo-") as scratch:
        tree = Path(scratch)
        _copy_text_files(snapshot, tree)
        outcome = apply_edits(tree, edits, max_bytes)
        if not outcome.applied:
            return list(outcome.refusals)
        paths = sorted({f.path for f in snapshot.files if f.text is not None} |
                       set(outcome.written))
        return {p: (tree / p).read_text() for p in paths}


def patch_of(snapshot: Snapshot, files: dict[str, str]) -> str:
    """The unified diff (git's, with ``a/`` and ``b/`` prefixes) taking the snapshot's text
    files to ``files``; empty when nothing changed."""
    before = {f.path: f.text for f in snapshot.files if f.text is not None}
    changed = sorted(p for p in set(before) | set(files) if before.get(p) != files.get(p))
    if not changed:
        return ""
    with tempfile.TemporaryDirectory(prefix="kernel-patch-") as scratch:
        top = Path(scratch)
        for side, texts in (("a", before), ("b", files)):
            (top / side).mkdir()
            for path in changed:
                if texts.get(path) is not None:
                    (top / side / path).parent.mkdir(parents=True, exist_ok=True)
                    (top / side / path).write_text(texts[path])
        done = subprocess.run(["git", "diff", "--no-index", "--no-prefix", "--no-color",
                               "--no-ext-diff", "a", "b"], cwd=top, capture_output=True,
                              check=False, timeout=120,
                              env={**os.environ, "GIT_CEILING_DIRECTORIES": scratch})
        if done.returncode not in (0, 1):
            raise RuntimeError(f"git diff failed: {done.stderr.decode(errors='replace')}")
        return done.stdout.decode()


def apply_patch(root: Path, tree_hash: str, patch: str, caps: Caps) -> None:
    """Write ``patch`` into the working tree at ``root`` only if that tree still is the
    snapshot it was made against; otherwise refuse (ConfigError) and write nothing."""
    checked_snapshot(str(root), tree_hash, caps)
    with tempfile.NamedTemporaryFile("w", suffix=".patch", delete=False) as handle:
        handle.write(patch)
    try:
        env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(Path(root).resolve().parent)}
        for check in (["--check"], []):
            done = subprocess.run(["git", "apply", *check, handle.name], cwd=root, env=env,
                                  capture_output=True, text=True, check=False, timeout=120)
            if done.returncode != 0:
                raise ConfigError(f"the patch does not apply to {root}: "
                                  f"{done.stderr.strip().splitlines()[0]}")
    finally:
        os.unlink(handle.name)


__all__ = ["apply_patch", "checked_snapshot", "edited_files", "patch_of"]
