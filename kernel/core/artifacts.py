"""Content-addressed artifact store: bytes on disk by sha256, metadata and lineage in the graph.

Identical content is stored once; every read re-hashes the bytes, so a corrupted or
altered blob is detected instead of silently used.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kernel.core.envelopes import Artifact, Lineage
from kernel.core.run import Run
from kernel.errors import KernelError
from kernel.paths import private_dir

URI_SCHEME = "cas://sha256/"
_SHA256 = re.compile(r"[0-9a-f]{64}")


def is_sha256(text: object) -> bool:
    """Whether ``text`` is a sha256 as the blob store names files: 64 lowercase hex
    digits, nothing else (it becomes a path, so nothing else may pass)."""
    return isinstance(text, str) and _SHA256.fullmatch(text) is not None


class ArtifactIntegrityError(KernelError):
    """Stored bytes no longer match their hash."""


class ArtifactNotFoundError(KernelError):
    """No stored bytes or no artifact node for that id."""


class BlobStore:
    """Bytes addressed by their sha256 under ``DATA_DIR/artifacts``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def of_data_dir(cls, data_dir: Path) -> BlobStore:
        """The deployment's blob store (``DATA_DIR/artifacts``, whatever the graph backend)."""
        return cls(data_dir / "artifacts")

    def path(self, sha256: str) -> Path:
        if not is_sha256(sha256):
            raise ArtifactNotFoundError(f"{sha256[:80]!r} is not a sha256 (64 lowercase hex "
                                        "digits), so no stored bytes have that name")
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        target = self.path(digest)
        if target.exists():
            return digest  # identical content is stored once
        private_dir(target.parent)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".incoming-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o400)  # the owner's only, and never changed in place
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return digest

    def get(self, sha256: str) -> bytes:
        """The bytes, read from a regular file without following a link."""
        path = self.path(sha256)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            raise ArtifactNotFoundError(f"no stored bytes for sha256 {sha256}") from None
        except OSError as exc:
            raise ArtifactIntegrityError(f"the stored bytes for {sha256} cannot be read "
                                         f"({path}: {exc.strerror or exc})") from None
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise ArtifactIntegrityError(f"{path} is not a regular file")
            data = handle.read()
        if hashlib.sha256(data).hexdigest() != sha256:
            raise ArtifactIntegrityError(f"artifact bytes for {sha256} are corrupted "
                                         f"({self.path(sha256)})")
        return data


class Artifacts:
    """Registers artifacts of a run: bytes in the blob store, node and lineage in the graph."""

    def __init__(self, run: Run, blobs: BlobStore) -> None:
        self.run = run
        self.blobs = blobs

    def register(self, goal_id: str, content: bytes | str, *, type: str, format: str,
                 lineage: Lineage, metadata: Mapping[str, Any] | None = None,
                 sigma: float | None = None, key: str | None = None,
                 unseen: bool = False) -> Artifact:
        """Store the bytes and register the artifact; its node is stored by the run's next
        commit (it rides the step's commit). With a ``key`` (the proposal it came from,
        say) registering again returns the artifact already registered, unless the caller
        knows none can be (``unseen``: a proposal just obtained, say), which saves the
        lookup."""
        data = content.encode() if isinstance(content, str) else content
        digest = self.blobs.put(data)
        if key is not None:
            for pending in self.run.step.pending_artifacts:
                if pending["props"].get("key") == key:
                    return self.get(pending["props"]["id"])
            found = [] if unseen else self.run.store.run("artifact/by_key", {"key": key})
            if found:
                return self.get(found[0]["id"])
        inputs = list(lineage.input_artifact_ids)
        if any(p["props"]["id"] in inputs for p in self.run.step.pending_artifacts):
            self.run.store_pending()  # its lineage edges need its inputs stored first
        artifact = Artifact(
            id=self.run.rider_id("artifact"), node_id=goal_id, type=type, format=format,
            uri=URI_SCHEME + digest, sha256=digest, size_bytes=len(data),
            metadata=dict(metadata or {}), lineage=lineage, sigma=sigma)
        props = {
            "id": artifact.id, "goal_id": goal_id, "type": type, "format": format,
            "uri": artifact.uri, "sha256": digest, "size_bytes": len(data),
            "metadata": json.dumps(artifact.metadata, sort_keys=True),
            "lineage": lineage.model_dump_json(), "sigma": sigma, "seq": self.run.seq,
            "key": key,
            "caption": f"{type}:{format} {digest[:8]}",
        }
        self.run.step.pending_artifacts.append(
            {"props": {k: v for k, v in props.items() if v is not None}, "input_ids": inputs})
        return artifact

    def get(self, artifact_id: str) -> Artifact:
        for pending in self.run.step.pending_artifacts:  # made by this step, not stored yet
            if pending["props"]["id"] == artifact_id:
                return _artifact(pending["props"])
        rows = self.run.store.run("artifact/get", {"artifact_id": artifact_id})
        if not rows:
            raise ArtifactNotFoundError(f"no artifact {artifact_id!r}")
        return _artifact(rows[0]["artifact"])

    def read(self, artifact_id: str) -> bytes:
        return self.blobs.get(self.get(artifact_id).sha256)


def _artifact(a: Mapping[str, Any]) -> Artifact:
    return Artifact(id=a["id"], node_id=a["goal_id"], type=a["type"], format=a["format"],
                    uri=a["uri"], sha256=a["sha256"], size_bytes=a["size_bytes"],
                    metadata=json.loads(a["metadata"]),
                    lineage=Lineage.model_validate_json(a["lineage"]), sigma=a.get("sigma"))
