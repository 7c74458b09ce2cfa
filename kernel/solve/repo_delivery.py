"""A repository goal's deliverable: the patch its final edits make against the snapshot
(``git apply --check`` takes it on a clean copy), a verification pack (the summary hash,
the tests run and their verdicts, the command that replays the run), and, asked for,
the patch written into the working tree, only while that tree is still the snapshot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kernel.artifact_files import load_artifact, resolution_output
from kernel.codebase.ingest import caps_of
from kernel.codebase.workspace import apply_patch, edited_files, patch_of
from kernel.core.run import Run
from kernel.core.summary import summary_hash
from kernel.errors import ConfigError
from kernel.runtime.inputs import RunInputs
from kernel.runtime.repo_input import RepoInput
from kernel.settings import KernelSettings
from kernel.solve.repo_goal import parse_edits, snapshot_of
from kernel.store.base import GraphStore

PATCH_NAME = "changes.patch"
PACK_NAME = "verification.json"


def repo_of(store: GraphStore, run_id: str) -> RepoInput | None:
    return RunInputs.of_run(Run.load(store, run_id)).repo


def final_patch(store: GraphStore, data_dir: Path, repo: RepoInput, artifact_id: str) -> str:
    """The unified diff the final output's edits make against the run's snapshot."""
    output = resolution_output(*load_artifact(store, data_dir, artifact_id))
    edits = parse_edits(output) if output is not None else "the artifact is no output"
    if isinstance(edits, str):
        raise ConfigError(f"{artifact_id} holds no edits: {edits}")
    files = edited_files(snapshot_of(repo), edits)
    if isinstance(files, list):  # verified before: only a changed tree gets here
        raise ConfigError(f"{artifact_id}'s edits no longer apply: {files[0].detail}")
    return patch_of(snapshot_of(repo), files)


def _tests_run(verification: Any) -> list[dict[str, Any]]:
    """Per test check of the final verification: its constraint, verdicts, exit code and
    the tests the change impacts (from the code graph)."""
    checked = json.loads(verification) if isinstance(verification, str) else verification
    return [{"constraint_id": c["constraint_id"], "passed": c["passed"],
             "tests": c["detail"]["tests"], "verdicts": c["detail"].get("verdicts", {}),
             "exit_code": c["detail"].get("exit_code"),
             "impacted_tests": c["detail"].get("impacted_tests", []),
             "impacted_first": c["detail"].get("impacted_first")}
            for c in (checked or {}).get("checks", []) if "tests" in c.get("detail", {})]


def deliver(store: GraphStore, settings: KernelSettings, run_id: str, root: dict[str, Any],
            directory: Path | None, apply: bool) -> dict[str, Any]:
    """Write the patch and the pack to ``directory`` (when given) and apply the patch to
    the working tree (when asked); what was written, for the report."""
    repo = repo_of(store, run_id)
    assert repo is not None
    patch = final_patch(store, settings.data_dir, repo, root["final_artifact_id"])
    done: dict[str, Any] = {"patch_bytes": len(patch.encode())}
    if directory is not None:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / PATCH_NAME).write_text(patch)
        pack = {"run": run_id, "summary_hash": summary_hash(store, run_id),
                "repository": repo.root, "tree_hash": repo.tree_hash,
                "patch": PATCH_NAME, "tests": _tests_run(root.get("verification")),
                "replay": f"kernel replay {run_id}"}
        (directory / PACK_NAME).write_text(json.dumps(pack, indent=2, sort_keys=True) + "\n")
        done["written"] = [str(directory / PATCH_NAME), str(directory / PACK_NAME)]
    if apply:
        apply_patch(Path(repo.root), repo.tree_hash, patch, caps_of(settings))
        done["applied_to"] = repo.root
    return done


__all__ = ["PACK_NAME", "PATCH_NAME", "deliver", "final_patch", "repo_of"]
