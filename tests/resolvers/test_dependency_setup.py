"""A repository's dependencies: read from requirements.txt (else pyproject's
dependencies), plain requirements only (an option, a URL or a path is refused before pip
could see it), installed by a setup run whose only network grant is the package
registry's hosts, kept by the requirements' hash, bound read-only into the test run, and
served from that cache the second time with no network at all. The sandboxed tests use
a package index on this machine (tests/package_index.py) reached through the sandbox's
CONNECT proxy."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from kernel.codebase.diagnostics import install_advice, setup_failed
from kernel.errors import ConfigError
from kernel.protocol import ResolveRequest
from kernel.protocol.requirements import (
    RequirementRefused,
    plain_requirement,
    read_requirements,
    requirements_hash,
)
from kernel.settings import KernelSettings
from resolvers import dependency_setup
from resolvers.codex_tools import CodexTools
from resolvers.registry import policy as shipped_policy
from resolvers.sandbox.policy import CommandRequest, Constitution, Reason, Registry, decide
from resolvers.sandbox.runner import default_workspace_root
from tests.package_index import OPENSSL, PackageIndex, make_certificate, package_index
from tests.sandbox_support import needs_sandbox


def test_requirements_are_read_from_requirements_txt_else_pyproject() -> None:
    text = "# pinned\ntinypkg==1.0  # the one we need\n\nother[extra] \\\n  >=2 ; python_version >= '3'\n"
    found = read_requirements({"requirements.txt": text, "pyproject.toml": "[project]\n"})
    assert found is not None and found.source == "requirements.txt"
    assert found.lines == ("tinypkg==1.0", 'other[extra]>=2; python_version >= "3"')
    pyproject = '[project]\nname = "x"\ndependencies = ["tinypkg==1.0"]\n'
    from_pyproject = read_requirements({"pyproject.toml": pyproject})
    assert from_pyproject is not None and from_pyproject.source == "pyproject.toml"
    assert from_pyproject.lines == ("tinypkg==1.0",)
    # none named: no setup at all
    assert read_requirements({"main.py": ""}) is None
    assert read_requirements({"requirements.txt": "# nothing yet\n"}) is None
    assert read_requirements({"pyproject.toml": '[project]\nname = "wordstats"\n'}) is None


@pytest.mark.parametrize(("files", "said"), [
    ({"requirements.txt": None}, "requirements.txt is not UTF-8 text"),
    ({"requirements.txt/extra.txt": "six\n"}, "requirements.txt is a folder, not a file"),
    ({"pyproject.toml": None}, "pyproject.toml is not UTF-8 text"),
    ({"pyproject.toml/x": ""}, "pyproject.toml is a folder, not a file"),
])
def test_a_requirements_source_that_cannot_be_read_is_refused_not_skipped(
        files: dict[str, str | None], said: str) -> None:
    """A source pip could not read as the kernel does is never passed over (it used to
    be, and the tests then ran without the dependencies, or with pyproject's instead)."""
    with pytest.raises(RequirementRefused, match=f"^{said}") as refused:
        read_requirements({**files, "pyproject.toml.bak": "", "README.md": "hi"})
    assert "UTF-8 text file" in refused.value.remedy


def test_the_cache_key_is_the_requirements_not_their_spelling() -> None:
    a = read_requirements({"requirements.txt": "tinypkg==1.0\n"})
    b = read_requirements({"requirements.txt": "# a comment\ntinypkg == 1.0   # pinned\n"})
    c = read_requirements({"requirements.txt": "tinypkg==1.1\n"})
    assert a is not None and b is not None and c is not None
    assert a.sha256 == b.sha256 != c.sha256
    assert a.payload() == {"source": "requirements.txt", "requirements": ["tinypkg==1.0"],
                           "sha256": requirements_hash(["tinypkg==1.0"])}


@pytest.mark.parametrize("line", [
    "--index-url http://evil", "-i http://evil", "--extra-index-url https://evil/simple",
    "-e .", "-r other.txt", "-c constraints.txt", "--trusted-host evil",
    "tinypkg @ https://evil/tinypkg-1.0-py3-none-any.whl", "git+https://evil/x.git",
    "./vendor/tinypkg", "tinypkg-1.0-py3-none-any.whl", "tinypkg==1.0 --hash=sha256:00",
])
def test_a_line_that_is_not_a_plain_requirement_is_refused(line: str) -> None:
    with pytest.raises(ValueError):
        plain_requirement(line)
    with pytest.raises(RequirementRefused) as refused:
        read_requirements({"requirements.txt": f"tinypkg==1.0\n{line}\n"})
    assert refused.value.line == 2 and refused.value.source == "requirements.txt"


def test_a_command_may_name_several_hosts_each_granted() -> None:
    policy = Constitution(network_hosts=("pypi.org", "files.pythonhosted.org"))
    both = CommandRequest(argv=["true"], network_hosts=("pypi.org", "files.pythonhosted.org"))
    assert decide(policy, both, Path("/tmp")).allowed
    one_more = CommandRequest(argv=["true"], network_hosts=("pypi.org", "evil.example"))
    refused = decide(policy, one_more, Path("/tmp"))
    assert refused.reason == Reason.NETWORK_NOT_GRANTED and "evil.example" in refused.detail


def test_the_setup_run_is_granted_the_registry_and_nothing_else() -> None:
    policy = Constitution(registry=Registry(hosts=("pypi.org", "files.pythonhosted.org")))
    assert policy.network_hosts == ()  # tests and commands: no network
    setup = policy.setup_policy()
    assert setup.network_hosts == ("pypi.org", "files.pythonhosted.org")
    assert "pip" in setup.python_packages and "pip" not in policy.python_packages
    assert not decide(setup, CommandRequest(argv=["python3"], network_hosts=("evil.example",)),
                      Path("/tmp")).allowed


def test_the_registry_comes_from_the_settings_and_its_index_must_be_granted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("KERNEL_REGISTRY_HOSTS", "KERNEL_REGISTRY_INDEX_URL", "KERNEL_REGISTRY_CERT",
                 "PIP_CERT"):
        monkeypatch.delenv(name, raising=False)
    assert shipped_policy().registry == Registry(hosts=("pypi.org", "files.pythonhosted.org"),
                                                 index_url="https://pypi.org/simple")
    monkeypatch.setenv("KERNEL_REGISTRY_HOSTS", '["localhost:8443"]')
    monkeypatch.setenv("KERNEL_REGISTRY_INDEX_URL", "https://localhost:8443/simple")
    assert shipped_policy().registry.hosts == ("localhost:8443",)
    monkeypatch.setenv("KERNEL_REGISTRY_INDEX_URL", "https://evil.example/simple")
    with pytest.raises(ConfigError, match="KERNEL_REGISTRY_INDEX_URL"):
        KernelSettings.load()
    monkeypatch.setenv("KERNEL_REGISTRY_INDEX_URL", "http://localhost:8443/simple")
    with pytest.raises(ConfigError, match="not an https URL"):
        KernelSettings.load()
    with pytest.raises(ValueError, match="not on one of the registry's hosts"):
        Registry(hosts=("pypi.org",), index_url="https://evil.example/simple")


def test_the_registry_cert_is_a_readable_pem_bundle_else_a_settings_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PIP_CERT", raising=False)
    monkeypatch.setenv("KERNEL_REGISTRY_CERT", "/nope.pem")
    with pytest.raises(ConfigError, match=r"^invalid setting KERNEL_REGISTRY_CERT='/nope.pem': "
                                          r".*cannot be read \(No such file"):
        KernelSettings.load().registry_ca()
    (tmp_path / "notes.txt").write_text("not a certificate\n")
    monkeypatch.setenv("KERNEL_REGISTRY_CERT", str(tmp_path / "notes.txt"))
    with pytest.raises(ConfigError, match="is not a PEM CA bundle"):
        KernelSettings.load().registry_ca()
    monkeypatch.setenv("KERNEL_REGISTRY_CERT", str(tmp_path))
    with pytest.raises(ConfigError, match="cannot be read"):
        KernelSettings.load().registry_ca()


@pytest.mark.skipif(OPENSSL is None, reason="the openssl command makes a certificate")
def test_the_registry_cert_defaults_to_the_hosts_pip_cert_and_the_setting_wins(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host, _ = make_certificate(tmp_path)
    monkeypatch.delenv("KERNEL_REGISTRY_CERT", raising=False)
    monkeypatch.setenv("PIP_CERT", str(host))
    assert shipped_policy().registry.cert == str(host)
    own = tmp_path / "own"
    own.mkdir()
    mine, _ = make_certificate(own)
    monkeypatch.setenv("KERNEL_REGISTRY_CERT", str(mine))
    assert shipped_policy().registry.cert == str(mine)
    monkeypatch.delenv("KERNEL_REGISTRY_CERT")
    # A PIP_CERT pip could not read is the host's business: pip's own bundle serves, and
    # no kernel command fails for it.
    monkeypatch.setenv("PIP_CERT", str(tmp_path / "gone.pem"))
    assert KernelSettings.load().registry_ca() is None
    assert shipped_policy().registry.cert is None


def test_a_setup_the_sandbox_would_not_trust_never_starts(tmp_path: Path) -> None:
    """The sandbox checks the requirements again: a line smuggled past the kernel, or a
    hash that is not theirs, is refused before any run (no sandbox is even made)."""
    policy = Constitution(registry=Registry(hosts=("pypi.org", "files.pythonhosted.org")))
    evil = ["--index-url", "http://evil"]
    for setup in ({"source": "requirements.txt", "requirements": evil,
                   "sha256": requirements_hash(evil)},
                  {"source": "requirements.txt", "requirements": ["tinypkg==1.0"],
                   "sha256": "0" * 64}):
        installed, record = dependency_setup.prepare(setup, policy, tmp_path / "cache",
                                                     tmp_path / "setup", None)
        assert installed is None and record["installed"] is False and not record["ran"]
        assert record["reason"].startswith("refused:")
    assert not (tmp_path / "setup").exists() and not (tmp_path / "cache").exists()


def test_a_failed_install_is_an_error_on_the_requirements_file() -> None:
    record = {"source": "requirements.txt", "sha256": "ab", "installed": False,
              "reason": "pip could not install the requirements",
              "output_tail": "ERROR: No matching distribution found for missingpkg==1\n"}
    assert setup_failed(record) == [{
        "severity": "error", "file": "requirements.txt", "line": None,
        "code": "dependencies_not_installed",
        "message": "the dependencies could not be installed: pip could not install the "
                   "requirements (ERROR: No matching distribution found for missingpkg==1)"}]
    assert setup_failed({**record, "installed": True}) == [] and setup_failed(None) == []


TLS_FAILURE = (
    "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) "
    "after connection broken by 'SSLError(SSLCertVerificationError(1, '[SSL: "
    "CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate in "
    "certificate chain (_ssl.c:1006)'))': /simple/six/\n"
    "ERROR: Could not find a version that satisfies the requirement six (from versions: none)\n"
    "ERROR: No matching distribution found for six\n")


def test_a_certificate_failure_is_named_with_the_setting_that_fixes_it() -> None:
    """pip ends on "No matching distribution found" when it could not verify the index's
    certificate (a TLS-intercepting proxy): the diagnostic says what happened instead."""
    record = {"source": "requirements.txt", "sha256": "ab", "installed": False,
              "reason": "pip could not install the requirements", "output_tail": TLS_FAILURE}
    (found,) = setup_failed(record)
    assert found["message"] == (
        "the dependencies could not be installed: pip could not install the requirements: "
        "the index's certificate could not be verified (CERTIFICATE_VERIFY_FAILED: "
        "self-signed certificate in certificate chain); set KERNEL_REGISTRY_CERT to the CA "
        "bundle (PEM) that signs it")
    assert "KERNEL_REGISTRY_CERT" in install_advice(record)
    assert "exists on the index" in install_advice({**record, "output_tail": "ERROR: No "
                                                    "matching distribution found for six"})


USES = """import errno
import os

import pytest
import tinypkg


def test_the_dependency_is_importable():
    assert tinypkg.VALUE == 42


def test_the_installed_dependencies_are_read_only():
    with pytest.raises(OSError) as refused:
        open(os.path.join(os.path.dirname(tinypkg.__file__), "planted.py"), "w")
    assert refused.value.errno == errno.EROFS  # a read-only mount, not only file modes
"""

needs_openssl = pytest.mark.skipif(OPENSSL is None, reason="the openssl command makes the "
                                                          "local index's certificate")


def _tools(index: PackageIndex, name: str, cache: Path | None) -> CodexTools:
    policy = Constitution(registry=Registry(hosts=(index.host,), index_url=index.url,
                                            cert=str(index.cert)))
    return CodexTools(default_workspace_root() / name, policy, cache_root=cache)


def _run(tools: CodexTools, requirements: str | None) -> dict[str, Any]:
    payload: dict[str, Any] = {"files": {"test_uses.py": USES}, "tests": ["test_uses.py"]}
    if requirements is not None:
        found = read_requirements({"requirements.txt": requirements})
        assert found is not None
        payload["setup"] = found.payload()
    request = ResolveRequest(operation="run_tests", goal_id="goal:deps", payload=payload)
    return dict(tools.resolve(request).output)


@needs_sandbox
@needs_openssl
@pytest.mark.slow  # three sandboxed runs and a pip install
def test_dependencies_are_installed_once_then_served_read_only_from_the_cache(
        tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with package_index(tmp_path / "index") as index:
        without = _run(_tools(index, f"deps-none-{tmp_path.name}", cache), None)
        assert not without["passed"] and "setup" not in without  # no setup: it cannot import
        assert without["results"][-1]["report"]["tests"] == {"test_uses.py": "error"}
        assert index.requests == []

        first = _run(_tools(index, f"deps-first-{tmp_path.name}", cache), "tinypkg==1.0\n")
        assert first["setup"] == {"source": "requirements.txt",
                                  "sha256": requirements_hash(["tinypkg==1.0"]),
                                  "installed": True, "cached": False, "ran": True,
                                  "seconds": first["setup"]["seconds"]}
        assert first["passed"], first["results"]
        assert first["results"][-1]["report"]["tests"] == {
            "test_uses.py::test_the_dependency_is_importable": "passed",
            "test_uses.py::test_the_installed_dependencies_are_read_only": "passed"}
        assert index.requests == ["/simple/tinypkg/", "/files/tinypkg-1.0-py3-none-any.whl"]
        kept = [p for p in cache.glob("*/*") if p.is_dir()]
        assert [p.name for p in kept] == [requirements_hash(["tinypkg==1.0"])]
        assert (kept[0] / "tinypkg" / "__init__.py").read_text() == "VALUE = 42\n"
        for path in [cache, kept[0].parent, *kept[0].rglob("*")]:  # private, like the data dir
            assert not stat.S_IMODE(path.lstat().st_mode) & 0o077, path

        again = _run(_tools(index, f"deps-again-{tmp_path.name}", cache),
                     "# the same, spelled otherwise\ntinypkg == 1.0\n")
        assert again["passed"] and again["setup"]["cached"] and not again["setup"]["ran"]
        assert len(index.requests) == 2  # the second run touched no network


@needs_sandbox
@needs_openssl
@pytest.mark.slow
def test_a_requirement_the_index_lacks_fails_the_setup_and_nothing_else_runs(
        tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with package_index(tmp_path / "index") as index:
        out = _run(_tools(index, f"deps-missing-{tmp_path.name}", cache), "missingpkg==1\n")
    assert not out["passed"] and out["results"] == []  # the tests never ran
    setup = out["setup"]
    assert setup["installed"] is False and setup["ran"] is True and setup["exit_code"] != 0
    assert "missingpkg" in setup["output_tail"]
    assert "/simple/missingpkg/" in index.requests
    assert not any(p.is_dir() and not p.name.startswith(".") for p in cache.glob("*/*"))
    assert json.loads(json.dumps(out))  # recorded as it is: plain JSON


@needs_sandbox
@needs_openssl
@pytest.mark.slow  # pip retries the connection a few times before it gives up
def test_an_index_whose_certificate_is_not_trusted_fails_the_setup_saying_so(
        tmp_path: Path) -> None:
    """No CA bundle given for the index's self-signed certificate (as behind a
    TLS-intercepting proxy): the record keeps pip's output, and the diagnostic names the
    certificate failure and KERNEL_REGISTRY_CERT, not pip's last line."""
    with package_index(tmp_path / "index") as index:
        policy = Constitution(registry=Registry(hosts=(index.host,), index_url=index.url))
        tools = CodexTools(default_workspace_root() / f"deps-tls-{tmp_path.name}", policy,
                           cache_root=tmp_path / "cache")
        out = _run(tools, "tinypkg==1.0\n")
    setup = out["setup"]
    assert setup["installed"] is False and setup["exit_code"] != 0
    assert "CERTIFICATE_VERIFY_FAILED" in setup["output_tail"]
    (found,) = setup_failed(setup)
    assert "the index's certificate could not be verified (CERTIFICATE_VERIFY_FAILED: " \
           "self-signed certificate" in found["message"]
    assert "KERNEL_REGISTRY_CERT" in found["message"]
