"""The read-only system a sandboxed command sees, and nothing more of the host.

Only the programs the Constitution allows are mounted (at ``/usr/bin/NAME``), with the
shared libraries they load (found by the system's ``ldd``), the Python runtime (the
kernel's own interpreter and standard library, so tests run on the same Python) and the
distributions the kernel's test runner needs (pytest and what it requires). An allowed
interpreter therefore cannot start a program that is not allowed: it is not there.

When the kernel runs as root, the command runs as an unprivileged uid, which may not be
able to enter where the interpreter lives (a private home): such sources are staged
once, as hard links (or copies across filesystems), in a root-owned directory others
can read but not change.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from kernel.errors import KernelError

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
BIN_DIR = "/usr/bin"
SITE_DIR = "/usr/lib/kernel-site"
RUNTIME_DIR = "/usr/lib/kernel-runtime"
RUNTIME_FILES = {f"{RUNTIME_DIR}/{name}": name
                 for name in ("pytest_launcher.py", "pytest_child.py", "net_bridge.py", "pytest.ini",
                              "empty")} | \
    {"/etc/passwd": "passwd", "/etc/group": "group"}
MASK_BYTES = 4096
_HERE = Path(__file__).resolve().parent
_LDD_LINE = re.compile(r"(?:=>\s*)?(/\S+)\s+\(0x[0-9a-f]+\)")


class LayoutError(KernelError):
    """The sandbox's system view cannot be assembled on this machine."""


@dataclass(frozen=True)
class Layout:
    """Mount operations for bubblewrap, in order: symlinks, read-only binds, masks."""

    symlinks: tuple[tuple[str, str], ...]
    binds: tuple[tuple[str, str], ...]
    masks: tuple[str, ...]
    programs: dict[str, str] = field(default_factory=dict)

    def source_of(self, dest: str) -> str:
        """The host file mounted at ``dest``."""
        return next(source for source, inside in self.binds if inside == dest)

    def argv(self) -> list[str]:
        args: list[str] = []
        for target, dest in self.symlinks:
            args += ["--symlink", target, dest]
        for source, dest in self.binds:
            args += ["--ro-bind", source, dest]
        for dest in self.masks:  # empty, read-only and too small to hold anything
            args += ["--size", str(MASK_BYTES), "--tmpfs", dest, "--remount-ro", dest]
        return args


def python_version_dir() -> str:
    return f"python{sys.version_info.major}.{sys.version_info.minor}"


@functools.cache
def build_layout(binaries: tuple[str, ...], packages: tuple[str, ...], stage: bool) -> Layout:
    """The view for this allowlist; ``stage`` when the sandbox uid differs from ours."""
    binds: dict[str, str] = {}
    symlinks: dict[str, str] = {}
    masks: list[str] = []
    programs: dict[str, str] = {}
    elf: list[str] = []
    for top in ("/bin", "/lib", "/lib64", "/sbin", "/lib32", "/libx32"):
        if os.path.islink(top):
            symlinks[top] = os.readlink(top)
    for name in sorted(set(binaries)):
        real = _interpreter() if name == "python3" else _system_binary(name)
        if real is None:
            continue
        programs[name] = f"{BIN_DIR}/{name}"
        binds[programs[name]] = real
        elf.append(real)
    if "python3" in programs:
        stdlib = os.path.realpath(sysconfig.get_paths(
            vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})["stdlib"])
        inside = f"/usr/lib/{python_version_dir()}"
        binds[inside] = stdlib
        dynload = Path(stdlib) / "lib-dynload"
        elf += sorted(str(p) for p in dynload.glob("*.so")) if dynload.is_dir() else []
        for name, source in _site_entries(packages).items():
            binds[f"{SITE_DIR}/{name}"] = source
            elf += sorted(str(p) for p in Path(source).rglob("*.so")) if Path(source).is_dir() else []
    for library in _libraries(elf):
        _expose(library, binds, symlinks)
    for dest, name in RUNTIME_FILES.items():
        binds[dest] = str(_HERE / "runtime" / name)
    if stage:
        binds = {dest: staged(source) for dest, source in binds.items()}
    inside = f"/usr/lib/{python_version_dir()}"
    if inside in binds and os.path.isdir(os.path.join(binds[inside], "site-packages")):
        masks.append(f"{inside}/site-packages")  # the base interpreter's own packages
    ordered = sorted(binds.items(), key=lambda item: (item[0].count("/"), item[0]))
    return Layout(symlinks=tuple((t, d) for d, t in sorted(symlinks.items())),
                  binds=tuple((s, d) for d, s in ordered), masks=tuple(masks),
                  programs=programs)


def _interpreter() -> str:
    """The base interpreter behind the kernel's (a venv's python is a symlink to it)."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    return os.path.realpath(base)


def _system_binary(name: str) -> str | None:
    found = shutil.which(name, path=SYSTEM_PATH)
    return os.path.realpath(found) if found else None


def distributions(names: tuple[str, ...]) -> list[metadata.Distribution]:
    """The named installed distributions and everything they require on this Python."""
    from packaging.requirements import Requirement

    found: list[metadata.Distribution] = []
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError as exc:
            raise LayoutError(f"the sandbox needs the Python package {name!r}, which is not "
                              f"installed for {sys.executable}: pip install {name}") from exc
        found.append(dist)
        for requirement in dist.requires or []:
            parsed = Requirement(requirement)
            if parsed.marker is None or parsed.marker.evaluate({"extra": ""}):
                todo.append(parsed.name)
    return found


def _site_entries(packages: tuple[str, ...]) -> dict[str, str]:
    """Top-level files and folders of the named distributions and what they require."""
    entries: dict[str, str] = {}
    for dist in distributions(packages):
        root = Path(str(dist.locate_file("")))
        for file in dist.files or []:
            top = file.parts[0]
            if top in ("..", "__pycache__") or top.endswith((".dist-info", ".egg-info", ".pth")):
                continue
            source = root / top
            if source.exists():
                entries[top] = str(source.resolve())
    return entries


def _libraries(files: list[str]) -> list[str]:
    """Every shared library the given ELF files load, as the dynamic loader resolves it."""
    ldd = shutil.which("ldd", path=SYSTEM_PATH)
    if ldd is None:
        raise LayoutError("ldd (libc-bin) is missing: the sandbox cannot find the libraries "
                          "its programs need")
    found: set[str] = set()
    for start in range(0, len(files), 200):
        chunk = files[start:start + 200]
        result = subprocess.run([ldd, *chunk], capture_output=True, text=True, check=False,
                                env={"LC_ALL": "C", "PATH": SYSTEM_PATH})
        found.update(m.group(1) for m in _LDD_LINE.finditer(result.stdout))
    return sorted(found | _loaded_at_run_time(found))


# Libraries the C library opens itself, which ldd cannot see: glibc loads libgcc_s for
# the stack unwinding of pthread_exit (CPython ends a daemon thread that way while the
# interpreter shuts down) and aborts the process when it is missing.
_RUN_TIME_LIBRARIES = ("libgcc_s.so.1",)


def _loaded_at_run_time(libraries: set[str]) -> set[str]:
    """The run-time libraries beside the C library the programs load, where they exist."""
    found: set[str] = set()
    for library in libraries:
        if os.path.basename(library).startswith("libc.so"):
            for name in _RUN_TIME_LIBRARIES:
                candidate = os.path.join(os.path.dirname(library), name)
                if os.path.exists(candidate):
                    found.add(candidate)
    return found


def _expose(path: str, binds: dict[str, str], symlinks: dict[str, str]) -> None:
    """Mount ``path`` so that it resolves inside as it does outside (symlink hops kept)."""
    current = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    for _ in range(40):
        if not os.path.islink(current):
            binds[current] = current
            return
        target = os.readlink(current)
        symlinks[current] = target
        joined = os.path.join(os.path.dirname(current), target)
        current = os.path.join(os.path.realpath(os.path.dirname(joined)), os.path.basename(joined))
    raise LayoutError(f"too many symbolic links behind {path}")


def _stage_root() -> Path:
    root = Path(tempfile.gettempdir()) / "kernel-sandbox-runtime"
    root.mkdir(mode=0o755, exist_ok=True)
    info = root.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise LayoutError(f"{root} is not a directory only this user can change: remove it")
    return root


def _readable_by_others(path: str) -> bool:
    real = Path(path)
    for parent in real.parents:
        if not parent.stat().st_mode & stat.S_IXOTH:
            return False
    mode = real.stat().st_mode
    return bool(mode & stat.S_IROTH) and (not real.is_dir() or bool(mode & stat.S_IXOTH))


def staged(source: str, runtime: bool = True) -> str:
    """``source`` itself when any uid can read it, else a staged read-only copy (of the
    ``runtime``: with the standard library's tests and site-packages left out)."""
    if _readable_by_others(source):
        return source
    info = os.stat(source)
    key = hashlib.sha256(f"{source}\0{info.st_mtime_ns}\0{info.st_size}".encode()).hexdigest()[:20]
    final = _stage_root() / key / os.path.basename(source)
    if final.exists():
        return str(final)
    building = Path(tempfile.mkdtemp(dir=_stage_root(), prefix=".staging-"))
    os.chmod(building, 0o755)
    target = building / os.path.basename(source)
    if os.path.isdir(source):
        shutil.copytree(source, target, symlinks=True, copy_function=_link_or_copy,
                        ignore=_skip_in_stage if runtime else None)
        for folder, dirs, _ in os.walk(target):
            for name in [folder, *(os.path.join(folder, d) for d in dirs)]:
                os.chmod(name, 0o755)
    else:
        _link_or_copy(source, str(target))
    try:
        os.rename(building, final.parent)
    except OSError:  # another process staged it first
        shutil.rmtree(building, ignore_errors=True)
    return str(final)


def _skip_in_stage(folder: str, names: list[str]) -> list[str]:
    """A staged standard library keeps an empty site-packages (it is masked) and no tests."""
    if os.path.basename(folder) == "site-packages":
        return names
    return [n for n in names if n in ("test", "tests", "idle_test")]


def _link_or_copy(source: str, target: str) -> str:
    """A hard link when the file is world-readable and on the same filesystem, else a copy."""
    mode = os.stat(source).st_mode
    if mode & stat.S_IROTH:
        try:
            os.link(source, target)
            return target
        except OSError:
            pass
    shutil.copy2(source, target)
    os.chmod(target, (mode & 0o777) | 0o444)
    return target
