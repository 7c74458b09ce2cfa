"""Hash-anchored edits to a snapshot's copy: applied all together, or refused with a
reason code and nothing written (a wrong before-hash, a path outside the repository, a
symlink out of it, an oversized diff, a diff naming another file or not applying)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kernel.codebase.edits import EditReason, FileEdit, apply_edits, sha256_of

CORE = "def count(text):\n    return len(text.split(' '))\n"
FIXED = "def count(text):\n    return len(text.split())\n"


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): sha256_of(p.read_bytes())
            for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/core.py").write_text(CORE)
    (root / "README.md").write_text("words\n")
    return root


def git_diff(path: str, before: str | None, after: str, scratch: Path) -> str:
    """The diff git itself writes for ``path`` going from ``before`` to ``after``."""
    for side, text in (("a", before), ("b", after)):
        if text is not None:
            (scratch / side / path).parent.mkdir(parents=True, exist_ok=True)
            (scratch / side / path).write_text(text)
    old = f"a/{path}" if before is not None else "/dev/null"
    done = subprocess.run(["git", "diff", "--no-index", "--no-prefix", old, f"b/{path}"],
                          cwd=scratch, capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    return done.stdout


def _diff_edit(path: str, before: str, after: str, scratch: Path) -> FileEdit:
    return FileEdit(path=path, kind="diff", before_sha256=sha256_of(before.encode()),
                    after_sha256=sha256_of(after.encode()),
                    diff=git_diff(path, before, after, scratch))


def test_a_diff_and_a_new_file_are_applied_together(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (tmp_path / "d").mkdir()
    new = "from pkg.core import count\n\n\ndef test_count():\n    assert count('a  b') == 2\n"
    outcome = apply_edits(root, [
        _diff_edit("pkg/core.py", CORE, FIXED, tmp_path / "d"),
        FileEdit(path="tests/test_core.py", kind="replace", before_sha256=None,
                 after_sha256=sha256_of(new.encode()), content=new)])
    assert outcome.applied and outcome.written == ("pkg/core.py", "tests/test_core.py")
    assert (root / "pkg/core.py").read_text() == FIXED
    assert (root / "tests/test_core.py").read_text() == new


def _refused(root: Path, edits: list[FileEdit], max_bytes: int = 1_000_000) -> list[str]:
    before = _tree(root)
    outcome = apply_edits(root, edits, max_bytes=max_bytes)
    assert not outcome.applied and outcome.written == ()
    assert _tree(root) == before  # nothing written, not even the edits that were fine
    return [r.reason.value for r in outcome.refusals]


def test_a_wrong_before_hash_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (tmp_path / "d").mkdir()
    good = FileEdit(path="README.md", kind="replace", before_sha256=sha256_of(b"words\n"),
                    after_sha256=sha256_of(b"more words\n"), content="more words\n")
    stale = _diff_edit("pkg/core.py", CORE.replace("' '", "','"), FIXED, tmp_path / "d")
    assert _refused(root, [good, stale]) == [EditReason.BEFORE_HASH]
    new_over_old = FileEdit(path="README.md", kind="replace", before_sha256=None,
                            after_sha256=sha256_of(b"x"), content="x")
    assert _refused(root, [new_over_old]) == [EditReason.BEFORE_HASH]


@pytest.mark.parametrize(("path", "reason"), [
    ("../outside.py", EditReason.OUTSIDE), ("pkg/../../outside.py", EditReason.OUTSIDE),
    ("/etc/hostname", EditReason.BAD_PATH), ("pkg//core.py", EditReason.BAD_PATH),
    (".git/config", EditReason.GIT_DIR), ("out/secret.txt", EditReason.SYMLINK_OUT),
    ("leak.txt", EditReason.SYMLINK_OUT), ("pkg", EditReason.NOT_A_FILE)])
def test_a_path_the_repository_does_not_own_is_refused(tmp_path: Path, path: str,
                                                        reason: EditReason) -> None:
    root = _repo(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere/secret.txt").write_text("secret\n")
    os.symlink(tmp_path / "elsewhere", root / "out")
    os.symlink(tmp_path / "elsewhere/secret.txt", root / "leak.txt")
    edit = FileEdit(path=path, kind="replace", before_sha256=sha256_of(b"secret\n"),
                    after_sha256=sha256_of(b"owned\n"), content="owned\n")
    assert _refused(root, [edit]) == [reason]
    assert (tmp_path / "elsewhere/secret.txt").read_text() == "secret\n"


def test_a_symlink_inside_the_repository_is_edited_through(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    os.symlink("pkg/core.py", root / "alias.py")
    outcome = apply_edits(root, [FileEdit(
        path="alias.py", kind="replace", before_sha256=sha256_of(CORE.encode()),
        after_sha256=sha256_of(FIXED.encode()), content=FIXED)])
    assert outcome.applied and (root / "pkg/core.py").read_text() == FIXED


def test_a_ten_megabyte_diff_is_refused_unread(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    huge = "--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n" + "+x\n" * 3_500_000
    edit = FileEdit(path="pkg/core.py", kind="diff", before_sha256=sha256_of(CORE.encode()),
                    after_sha256="0" * 64, diff=huge)
    assert _refused(root, [edit]) == [EditReason.TOO_LARGE]


def test_a_diff_must_name_its_file_apply_cleanly_and_reach_its_after_hash(
        tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (tmp_path / "d").mkdir()
    other = _diff_edit("README.md", "words\n", "more\n", tmp_path / "d")
    misnamed = other.model_copy(update={"path": "pkg/core.py",
                                        "before_sha256": sha256_of(CORE.encode())})
    assert _refused(root, [misnamed]) == [EditReason.OTHER_FILE]
    (tmp_path / "e").mkdir()
    drifted = _diff_edit("pkg/core.py", CORE.replace("text", "words"), FIXED, tmp_path / "e")
    wrong_context = drifted.model_copy(update={"before_sha256": sha256_of(CORE.encode())})
    assert _refused(root, [wrong_context]) == [EditReason.NO_APPLY]
    (tmp_path / "f").mkdir()
    good = _diff_edit("pkg/core.py", CORE, FIXED, tmp_path / "f")
    assert _refused(root, [good.model_copy(update={"after_sha256": "0" * 64})]) == \
        [EditReason.AFTER_HASH]
    assert _refused(root, [good, good]) == [EditReason.DUPLICATE]


def test_an_edit_carries_the_body_its_kind_names() -> None:
    with pytest.raises(ValueError, match="diff edit"):
        FileEdit(path="a.py", kind="diff", before_sha256=None, after_sha256="0",
                 content="x")
    with pytest.raises(ValueError, match="replace edit"):
        FileEdit(path="a.py", kind="replace", before_sha256=None, after_sha256="0")
