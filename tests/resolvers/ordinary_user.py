"""A copy of what the attack suite needs, readable by an ordinary user: the sandbox
package and its imports (src/) and the distributions they need (site/), taken from the
kernel's own environment, so the second pass needs no network."""

from __future__ import annotations

import shutil
from pathlib import Path

from resolvers.sandbox.layout import distributions

SOURCES = ("kernel/__init__.py", "kernel/errors.py", "resolvers/__init__.py", "resolvers/sandbox",
           "tests/__init__.py", "tests/sandbox_support.py", "tests/resolvers/__init__.py",
           "tests/resolvers/test_sandbox_attacks.py")
DISTRIBUTIONS = ("pydantic", "pytest")


def prepare_copy(repository: Path, target: Path) -> Path:
    target.mkdir(mode=0o755)
    for relative in SOURCES:
        source, dest = repository / relative, target / "src" / relative
        dest.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, dest)
    site = target / "site"
    site.mkdir()
    for dist in distributions(DISTRIBUTIONS):
        root = Path(str(dist.locate_file("")))
        for top in sorted({f.parts[0] for f in dist.files or [] if f.parts[0] != ".."}):
            source = root / top
            if source.is_dir():
                shutil.copytree(source, site / top, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__"))
            elif source.exists():
                shutil.copy2(source, site / top)
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target
