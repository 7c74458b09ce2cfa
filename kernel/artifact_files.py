"""Artifacts out of the store: what an artifact says, and its files on disk.

A resolver's output is stored as one JSON document (the text, any further files,
its tests and the metrics it measured); an assembled or tool artifact is the text
itself. People want the files: ``main.py`` and its tests, laid out the way the
sandbox ran them, written only under the directory they chose.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path, PurePosixPath
from typing import Any

from kernel.core.artifacts import ArtifactNotFoundError, BlobStore
from kernel.errors import ConfigError, KernelError
from kernel.protocol.solve_models import ResolutionOutput
from kernel.store.base import GraphStore

_EXTENSIONS = {"python": "py", "markdown": "md", "json": "json", "text": "txt", "yaml": "yaml",
               "csv": "csv", "html": "html", "shell": "sh", "javascript": "js", "sql": "sql"}


class UnsafePathError(KernelError):
    """A file name inside an artifact would land outside the chosen directory."""


def artifact_record(store: GraphStore, artifact_id: str) -> dict[str, Any]:
    """The artifact's node properties, with its metadata and lineage decoded."""
    rows = store.run("artifact/record", {"artifact_id": artifact_id})
    if not rows:
        raise ConfigError(f"no artifact {artifact_id!r} in this graph")
    props = dict(rows[0]["artifact"])
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
    return {_safe(path): text.encode() for path, text in files.items()}


def save_files(files: dict[str, bytes], directory: Path, *, overwrite: bool = False) -> list[Path]:
    """Write ``files`` under ``directory`` (created if missing); refuses to replace an
    existing file unless ``overwrite``. Checks everything before the first write."""
    if directory.exists() and not directory.is_dir():
        raise ConfigError(f"{directory} is a file: give a directory to save into")
    if not directory.exists() and not directory.parent.is_dir():
        raise ConfigError(f"{directory}: the directory {directory.parent} does not exist "
                          "(create it first)")
    targets = {directory / path: content for path, content in sorted(files.items())}
    clashes = [str(t) for t in targets if t.exists()]
    if clashes and not overwrite:
        raise ConfigError(f"{clashes[0]} already exists: choose an empty directory or pass "
                          "--force to replace it")
    written: list[Path] = []
    for target, content in targets.items():
        tmp = target.with_name(f".{target.name}.partial")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(content)
            os.replace(tmp, target)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            done = f" ({len(written)} of {len(targets)} written before it)" if written else ""
            raise ConfigError(f"cannot write {target}: {exc.strerror or exc}{done}") from exc
        written.append(target)
    return written


def _main_name(content_format: str) -> str:
    if content_format == "python":
        return "main.py"
    return f"artifact.{_EXTENSIONS.get(content_format, 'txt')}"


def _safe(path: str) -> str:
    """A relative path with no way out of its directory: the names come from a model."""
    pure = PurePosixPath(path.replace("\\", "/"))
    if not path or pure.is_absolute() or ".." in pure.parts \
            or any(":" in part or "\x00" in part for part in pure.parts):
        raise UnsafePathError(f"the artifact names a file {path!r} outside its directory; "
                              "nothing was written")
    return str(pure)
