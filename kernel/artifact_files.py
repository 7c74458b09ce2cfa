"""Artifacts out of the store: what an artifact says, and its files on disk.

A resolver's output is stored as one JSON document (the text, any further files,
its tests and the metrics it measured), and so is an assembled deliverable (every part's
files and tests kept); a tool artifact is the text itself. People want the files:
``main.py`` and its tests, laid out the way the sandbox ran them, written only under the
directory they chose.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
from pathlib import Path, PurePosixPath
from typing import Any

from kernel.core.artifacts import ArtifactNotFoundError, BlobStore
from kernel.errors import ConfigError, KernelError
from kernel.protocol import file_names
from kernel.protocol.solve_models import ResolutionOutput
from kernel.repositories import views
from kernel.store.base import GraphStore

_EXTENSIONS = {"python": "py", "markdown": "md", "json": "json", "text": "txt", "yaml": "yaml",
               "csv": "csv", "html": "html", "shell": "sh", "javascript": "js", "sql": "sql"}


class UnsafePathError(KernelError):
    """A file name inside an artifact would land outside the chosen directory."""


# Files that some tool runs on its own once they sit in a folder a person works in: a
# model's output may hold them (the sandbox runs pytest with --noconftest and never reads
# the others), but writing them for a person would run the model's code on their machine.
_RUN_BY_NAME = {
    "conftest.py": "pytest runs it",
    "pytest.ini": "pytest loads the plugins its addopts name",
    "sitecustomize.py": "Python runs it at start-up",
    "usercustomize.py": "Python runs it at start-up",
    ".envrc": "direnv runs it on entering the folder",
    ".env": "direnv and dotenv tools load it",
    ".pre-commit-config.yaml": "pre-commit runs the hooks it names",
    ".gitattributes": "git runs the filters it names",
    ".gitmodules": "git fetches and checks out what it names",
    ".bashrc": "the shell runs it", ".profile": "the shell runs it",
    ".bash_profile": "the shell runs it", ".zshrc": "the shell runs it",
}
_RUN_BY_FOLDER = {
    ".git": "git runs its hooks and the commands its config names",
    ".husky": "git hooks run from it", ".githooks": "git hooks run from it",
    ".vscode": "the editor runs its tasks and settings",
    ".idea": "the editor runs its run configurations",
    ".devcontainer": "the editor builds and runs what it names",
}


def runs_on_its_own(name: str) -> str | None:
    """Why a tool would run the file ``name`` without being asked (None: none would).
    Names are compared case-folded: a case-insensitive file system makes ``.GIT`` ``.git``."""
    parts = [part.casefold() for part in PurePosixPath(name).parts]
    for part in parts[:-1]:
        if part in _RUN_BY_FOLDER:
            return _RUN_BY_FOLDER[part]
    last = parts[-1] if parts else ""
    if last.endswith(".pth"):
        return "Python runs its import lines at start-up from site-packages"
    return _RUN_BY_NAME.get(last) or _RUN_BY_FOLDER.get(last)


def split_autorun(files: dict[str, bytes]) -> tuple[dict[str, bytes], dict[str, str]]:
    """``files`` without those a tool runs on its own, and those (name -> why)."""
    refused = {name: why for name in files if (why := runs_on_its_own(name)) is not None}
    return {n: c for n, c in files.items() if n not in refused}, refused


def refused_note(refused: dict[str, str], artifact_id: str) -> str:
    """One line saying which files were not written, why, and how to write them."""
    named = "; ".join(f"{name} ({why})" for name, why in sorted(refused.items()))
    return (f"not written, as tools would run them on this machine on their own: {named}; "
            f"kernel artifact save {artifact_id} DIR --allow-autorun writes them")


def artifact_record(store: GraphStore, artifact_id: str) -> dict[str, Any]:
    """The artifact's node properties, with its metadata and lineage decoded."""
    props = views.artifact_record(store, artifact_id)
    if props is None:
        raise ConfigError(f"no artifact {artifact_id!r} in this graph")
    props["metadata"] = json.loads(props.get("metadata") or "{}")
    props["lineage"] = json.loads(props.get("lineage") or "{}")
    return props


def artifact_bytes(data_dir: Path, record: dict[str, Any]) -> bytes:
    try:
        return BlobStore.of_data_dir(data_dir).get(str(record["sha256"]))
    except ArtifactNotFoundError:
        raise ConfigError(
            f"{record['id']}: its contents are not in this deployment (sha256 "
            f"{str(record['sha256'])[:12]}…); the graph was probably imported from an export "
            "made with --no-contents: import one made with contents") from None


def load_artifact(store: GraphStore, data_dir: Path,
                  artifact_id: str) -> tuple[dict[str, Any], bytes]:
    """The artifact's record and its bytes from this deployment's blob store."""
    record = artifact_record(store, artifact_id)
    return record, artifact_bytes(data_dir, record)


def resolution_output(record: dict[str, Any], data: bytes) -> ResolutionOutput | None:
    """The resolver's output document, when the artifact is one."""
    if record.get("format") != "json" or "content_format" not in record["metadata"]:
        return None
    try:
        return ResolutionOutput.model_validate_json(data)
    except ValueError:
        return None


def artifact_text(record: dict[str, Any], data: bytes) -> str:
    """What a person reads: the resolver's text, or the artifact's own text."""
    output = resolution_output(record, data)
    if output is not None:
        return output.content
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{record['id']} holds {len(data)} bytes of binary data: write it "
                          "to files with 'kernel artifact save ID DIR'") from None


def artifact_files(record: dict[str, Any], data: bytes) -> dict[str, bytes]:
    """Relative path -> bytes: a resolver's output laid out as the sandbox ran it
    (``main.py`` beside its tests; text in another format as ``artifact.<ext>``); any
    other artifact as one file named by its format."""
    output = resolution_output(record, data)
    if output is None:
        return {_main_name(str(record.get("format", ""))): data}
    files = output.workspace_files()
    main = _main_name(output.format)
    if output.content and main not in files:
        files[main] = output.content
    clashes = file_names.problems(files)
    if clashes:
        raise UnsafePathError(f"the artifact names files it cannot have ({clashes[0]}); "
                              "nothing was written")
    return {_safe(path): text.encode() for path, text in files.items()}


def save_files(files: dict[str, bytes], directory: Path, *, overwrite: bool = False) -> list[Path]:
    """Write ``files`` under ``directory`` (created if missing); refuses to replace an
    existing file unless ``overwrite``. Checks everything before the first write.

    No link inside ``directory`` is ever followed: each folder is opened from its
    parent's descriptor with ``O_NOFOLLOW``, each file is written to a new name made
    with ``O_EXCL`` and renamed over its target (a rename replaces a link, never writes
    through it), and a target or folder that is a link is refused."""
    if directory.exists() and not directory.is_dir():
        raise ConfigError(f"{directory} is a file: give a directory to save into")
    if not directory.exists() and not directory.parent.is_dir():
        raise ConfigError(f"{directory}: the directory {directory.parent} does not exist "
                          "(create it first)")
    targets = {path: content for path, content in sorted(files.items())}
    for path in targets:
        _check_target(directory, path, overwrite)
    written: list[Path] = []
    try:
        os.mkdir(directory, 0o777)
    except FileExistsError:
        pass
    except OSError as exc:
        first = directory / next(iter(targets), "")
        raise ConfigError(f"cannot write {first}: {exc.strerror or exc}") from exc
    root = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for path, content in targets.items():
            try:
                _write_under(root, PurePosixPath(path), content, overwrite)
            except OSError as exc:
                done = f" ({len(written)} of {len(targets)} written before it)" if written \
                    else ""
                raise ConfigError(f"cannot write {directory / path}: "
                                  f"{_why(exc)}{done}") from exc
            written.append(directory / path)
    finally:
        os.close(root)
    return written


def _check_target(directory: Path, relative: str, overwrite: bool) -> None:
    """Refuse, before anything is written, a path whose folders or file are links, a
    folder that is a file, or an existing file (unless ``overwrite``)."""
    here = directory
    parts = PurePosixPath(relative).parts
    for index, part in enumerate(parts):
        here = here / part
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise ConfigError(f"cannot write {directory / relative}: {_why(exc)}") from exc
        last = index == len(parts) - 1
        if stat.S_ISLNK(info.st_mode):
            raise ConfigError(f"{here} is a symbolic link: nothing is written through links; "
                              "remove it or choose another directory")
        if not last and not stat.S_ISDIR(info.st_mode):
            raise ConfigError(f"{here} is a file, but {directory / relative} needs it to be "
                              "a directory: choose an empty directory")
        if last and stat.S_ISDIR(info.st_mode):
            raise ConfigError(f"{here} is a directory: choose an empty directory")
        if last and not overwrite:
            raise ConfigError(f"{here} already exists: choose an empty directory or pass "
                              "--force to replace it")


def _write_under(root: int, path: PurePosixPath, content: bytes, overwrite: bool) -> None:
    folder = os.dup(root)
    try:
        for part in path.parts[:-1]:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o777, dir_fd=folder)
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                            dir_fd=folder)
            os.close(folder)
            folder = inner
        name = path.name
        if not overwrite:  # refused above; a file that appeared since is not replaced
            with contextlib.suppress(FileNotFoundError):
                os.lstat(name, dir_fd=folder)
                raise FileExistsError(errno.EEXIST, "it appeared while saving")
        partial = f".{name}.{secrets.token_hex(6)}.partial"
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o666, dir_fd=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(content)
            os.rename(partial, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(partial, dir_fd=folder)
            raise
    finally:
        os.close(folder)


def _why(exc: OSError) -> str:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return "a folder on the way is a symbolic link or a file: nothing is written " \
               "through links"
    return str(exc.strerror or exc)


def _main_name(content_format: str) -> str:
    if content_format == "python":
        return "main.py"
    return f"artifact.{_EXTENSIONS.get(content_format, 'txt')}"


def _safe(path: str) -> str:
    """A relative path with no way out of its directory: the names come from a model."""
    problem = file_names.problem_with(path)
    if problem is not None:
        raise UnsafePathError(f"the artifact names a file it cannot have ({problem}); "
                              "nothing was written")
    return path
