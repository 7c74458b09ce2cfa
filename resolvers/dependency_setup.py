"""A repository's setup phase: its dependencies installed once per requirements hash, in
a sandbox of their own whose only network is the package registry, and kept for its
test runs.

The setup run is a separate sandbox (its own workspace, next to the test run's) under
the policy's ``setup_policy``: the registry's hosts are its only grant, reached through
the kernel's CONNECT proxy, and the repository's files are not in it, only the
requirements, each checked again to be plain before pip sees it (as arguments, never a
requirements file pip would read options from). pip installs into the workspace
(``--target``); on success the tree is moved into the cache, under the kernel's data
dir, as ``<python>-<index>/<requirements sha256>``, and every later run of the same
requirements is bound that directory read-only with no setup run and no network. A
failed install leaves nothing in the cache and is reported, never raised.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kernel.protocol.requirements import checked_setup
from resolvers.sandbox import CommandRequest, Constitution, RunResult, Sandbox
from resolvers.sandbox.layout import LayoutError
from resolvers.sandbox.runner import remove_tree

TARGET = "site"  # where pip installs, in the setup run's workspace
CA_FILE = ".registry-ca.pem"
OUTPUT_KEPT = 2000  # characters of the setup run's output kept in its record


def cache_dir(cache_root: Path, policy: Constitution, sha256: str) -> Path:
    """Where the requirements with this hash are kept once installed, for this Python
    and this index (the same requirements can resolve to other files on either)."""
    where = hashlib.sha256(policy.registry.index_url.encode()).hexdigest()[:12]
    version = f"py{sys.version_info.major}{sys.version_info.minor}"
    return cache_root / f"{version}-{where}" / sha256


def pip_argv(policy: Constitution, requirements: list[str], cert: bool) -> list[str]:
    """pip's command line: the registry's index only, into the workspace, no cache, no
    prompts, and the requirements after ``--`` (so none is read as an option)."""
    return ["python3", "-m", "pip", "install", "--no-input", "--disable-pip-version-check",
            "--no-cache-dir", "--quiet", "--progress-bar", "off", "--target", TARGET,
            "--index-url", policy.registry.index_url,
            *(["--cert", CA_FILE] if cert else []), "--", *requirements]


def _record(setup: Mapping[str, Any], **facts: Any) -> dict[str, Any]:
    return {"source": setup.get("source"), "sha256": setup.get("sha256"), **facts}


def _failed(setup: Mapping[str, Any], reason: str, run: RunResult | None = None
            ) -> tuple[None, dict[str, Any]]:
    facts: dict[str, Any] = {"installed": False, "ran": run is not None and run.ran,
                             "reason": reason}
    if run is not None:
        facts |= {"exit_code": run.exit_code, "limit": str(run.reason) if run.reason else None,
                  "output_tail": (run.stdout + run.stderr)[-OUTPUT_KEPT:],
                  "seconds": round(run.seconds, 3)}
    return None, _record(setup, **facts)


def prepare(setup: Mapping[str, Any], policy: Constitution, cache_root: Path, home: Path,
            timeout: float | None) -> tuple[Path | None, dict[str, Any]]:
    """The installed dependencies' directory (None when they could not be installed) and
    the setup's record: its hash, whether it came from the cache, and a failed run's
    exit status and output. ``home``: where the setup run's sandbox may live."""
    try:
        requirements = checked_setup(setup)
    except ValueError as exc:
        return _failed(setup, f"refused: {exc}")
    final = cache_dir(cache_root, policy, str(setup["sha256"]))
    if final.is_dir():
        return final, _record(setup, installed=True, cached=True, ran=False)
    if not policy.registry.hosts:
        return _failed(setup, "no package registry is granted (KERNEL_REGISTRY_HOSTS is "
                              "empty): the dependencies cannot be installed")
    sandbox = Sandbox(home, policy.setup_policy())
    try:
        cert = _place_cert(policy, sandbox.workspace)
        if isinstance(cert, str):
            return _failed(setup, cert)
        try:
            run = sandbox.run(CommandRequest(argv=pip_argv(policy, requirements, cert),
                                             network_hosts=policy.registry.hosts,
                                             timeout=timeout))
        except LayoutError as exc:  # pip is not installed beside the kernel
            return _failed(setup, str(exc))
        installed = sandbox.workspace / TARGET
        if not run.ok or not installed.is_dir():
            return _failed(setup, "pip could not install the requirements" if run.ran
                           else f"the setup run did not start: {run.reason} {run.detail}", run)
        _keep(installed, final)
    finally:
        sandbox.remove()
    return final, _record(setup, installed=True, cached=False, ran=True,
                          seconds=round(run.seconds, 3))


def _place_cert(policy: Constitution, workspace: Path) -> bool | str:
    """The registry's CA bundle copied into the setup run's workspace (True), none to
    copy (False), or why it cannot be read."""
    if policy.registry.cert is None:
        return False
    try:
        text = Path(policy.registry.cert).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        return f"the registry's CA bundle {policy.registry.cert} cannot be read: {exc}"
    (workspace / CA_FILE).write_text(text)
    return True


def _keep(installed: Path, final: Path) -> None:
    """Copy the installed tree into the cache under a temporary name, then rename it into
    place: a run reading the cache sees a whole install or none (another run that got
    there first wins, and this copy is dropped). The cache is private, like the rest of
    the data dir (folders 0700, files 0600 or 0700): an ordinary user's sandbox maps that
    user to its own uid and reads it as the owner; a root kernel's sandbox runs as
    another uid, and is given a staged read-only copy (sandbox/layout.py ``staged``), as
    it would be anyway under a data dir only root can enter."""
    final.parent.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # the cache's root
    final.parent.mkdir(mode=0o700, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=".installing-", dir=final.parent))
    try:
        shutil.copytree(installed, building / "tree", symlinks=True)
        for folder, dirs, files in os.walk(building / "tree"):
            for name in [*dirs, *files]:
                path = os.path.join(folder, name)
                if not os.path.islink(path):
                    mode = os.stat(path).st_mode
                    os.chmod(path, 0o700 if os.path.isdir(path) else (mode & 0o700) | 0o400)
        os.chmod(building / "tree", 0o700)
        with contextlib.suppress(OSError):
            os.rename(building / "tree", final)
    finally:
        remove_tree(building)


__all__ = ["cache_dir", "pip_argv", "prepare"]
