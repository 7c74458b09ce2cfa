"""A repository's snapshot: which files it holds, their content hashes, and one tree hash.

The files are those git tracks plus the untracked files git does not ignore (``git
ls-files -co --exclude-standard``) when the path is a git work tree, and every file
outside ``.git/`` otherwise. Everything is checked before anything is stored: a path
that is not a readable directory, a snapshot over the caps or a symlink that points out
of the repository is refused with one line saying how to fix it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kernel.errors import ConfigError

LANGUAGES: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".go": "go", ".rs": "rust", ".ts": "typescript",
    ".tsx": "typescript", ".js": "javascript", ".mjs": "javascript", ".java": "java",
    ".c": "c", ".h": "c", ".cpp": "cpp", ".md": "markdown", ".toml": "toml",
    ".json": "json", ".yml": "yaml", ".yaml": "yaml", ".cypher": "cypher", ".sh": "shell",
}


@dataclass(frozen=True)
class Caps:
    """How much a snapshot may hold, and the size above which a file's text is not kept."""

    max_files: int
    max_bytes: int
    max_file_bytes: int


@dataclass(frozen=True)
class SnapshotFile:
    """One file: its facts, and its text when it is a text file small enough to keep."""

    path: str  # relative, with forward slashes
    sha256: str
    size: int
    language: str
    is_test: bool
    binary: bool
    oversized: bool
    text: str | None


@dataclass(frozen=True)
class Snapshot:
    root: Path
    files: tuple[SnapshotFile, ...]
    tree_hash: str


def language_of(path: str) -> str:
    return LANGUAGES.get(Path(path).suffix.lower(), "other")


def is_test_path(path: str) -> bool:
    """Test code by the conventions pytest and most projects follow."""
    parts = path.split("/")
    name = parts[-1]
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or any(p in ("tests", "test") for p in parts[:-1]))


def tree_hash(files: tuple[SnapshotFile, ...]) -> str:
    """sha256 over each path and its content hash, in path order."""
    digest = hashlib.sha256()
    for f in sorted(files, key=lambda f: f.path):
        digest.update(f"{f.path}\0{f.sha256}\n".encode())
    return digest.hexdigest()


def _git_paths(root: Path) -> list[str] | None:
    """The paths git lists (tracked, and untracked not ignored), or None outside a work tree."""
    try:
        inside = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-prefix"],
                                capture_output=True, text=True, check=False, timeout=60)
    except FileNotFoundError:
        return None
    if inside.returncode != 0 or inside.stdout.strip():
        return None  # not a work tree, or a subdirectory of one: walk it instead
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "-co", "--exclude-standard",
                             "-z"], capture_output=True, check=False, timeout=300)
    if listed.returncode != 0:
        return None
    return sorted({p for p in listed.stdout.decode("utf-8", "surrogateescape").split("\0") if p})


def _walked_paths(root: Path) -> list[str]:
    found: list[str] = []

    def refuse(error: OSError) -> None:
        raise ConfigError(f"cannot read {error.filename}: {error.strerror}; make it readable "
                          "or give a path without it")

    for directory, dirs, names in os.walk(root, onerror=refuse):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        base = Path(directory).relative_to(root)
        found.extend((base / n).as_posix() for n in names)
    return sorted(found)


def _inside(root: Path, path: Path, shown: str) -> Path | None:
    """The file ``path`` names (None for a directory or a dangling link), refusing a
    symlink that leads out of the repository."""
    if path.is_symlink():
        target = path.resolve()
        if not target.is_relative_to(root):
            raise ConfigError(f"{shown} is a symlink to {target}, outside the repository; "
                              "remove it or ingest a directory that holds its target")
        path = target
    return path if path.is_file() else None


def _read(root: Path, shown: str) -> bytes | None:
    path = _inside(root, root / shown, shown)
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {shown}: {exc.strerror}; make it readable or add it "
                          "to .gitignore") from None


def _fact(path: str, data: bytes, caps: Caps) -> SnapshotFile:
    binary = b"\0" in data[:8192]
    text: str | None = None
    if not binary and len(data) <= caps.max_file_bytes:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            binary = True
    return SnapshotFile(path=path, sha256=hashlib.sha256(data).hexdigest(), size=len(data),
                        language=language_of(path), is_test=is_test_path(path), binary=binary,
                        oversized=len(data) > caps.max_file_bytes, text=text)


def checked_root(path: Path) -> Path:
    root = path.expanduser().resolve()
    if not root.is_dir():
        raise ConfigError(f"{path} is not a directory; give the path of a repository's "
                          "top directory")
    if not os.access(root, os.R_OK | os.X_OK):
        raise ConfigError(f"{path} is not readable; check its permissions")
    return root


def take_snapshot(path: Path, caps: Caps) -> Snapshot:
    """Read the repository at ``path``; refuses (ConfigError, exit 2) before any store write."""
    root = checked_root(path)
    paths = _git_paths(root)
    if paths is None:
        paths = _walked_paths(root)
    if len(paths) > caps.max_files:
        raise ConfigError(f"{path} holds {len(paths):,} files, over the cap of "
                          f"{caps.max_files:,}; raise KERNEL_REPO_MAX_FILES or ingest a "
                          "subdirectory")
    files: list[SnapshotFile] = []
    total = 0
    for shown in paths:
        data = _read(root, shown)
        if data is None:
            continue
        total += len(data)
        if total > caps.max_bytes:
            raise ConfigError(f"{path} holds more than {caps.max_bytes:,} bytes, over the "
                              "cap; raise KERNEL_REPO_MAX_BYTES or ingest a subdirectory")
        files.append(_fact(shown, data, caps))
    frozen = tuple(files)
    return Snapshot(root=root, files=frozen, tree_hash=tree_hash(frozen))
