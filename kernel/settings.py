"""Settings read from ``KERNEL_*`` environment variables (and CLI options that override them).

One place decides which graph store the kernel talks to, where its data lives and
which thresholds a run starts with, so tests and the CLI configure it the same way.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qs, urlparse

import platformdirs
from pydantic import (
    BaseModel,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict, SettingsError

from kernel.errors import ConfigError

Backend = Literal["embedded", "neo4j"]

PYPI_HOSTS = ("pypi.org", "files.pythonhosted.org")  # the index, and where its files are
PYPI_INDEX = "https://pypi.org/simple"
NEO4J_SCHEMES = ("neo4j", "neo4j+s", "neo4j+ssc", "bolt", "bolt+s", "bolt+ssc")


def ca_bundle_problem(path: Path) -> str | None:
    """Why ``path`` is no CA bundle pip could trust (None when it is one): missing,
    unreadable, or holding no PEM certificate. Read as pip's TLS library reads it."""
    try:
        info = path.stat()
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    return _bundle_problem(str(path), info.st_mtime_ns, info.st_size)


@functools.lru_cache(maxsize=8)
def _bundle_problem(path: str, _mtime_ns: int, _size: int) -> str | None:
    import ssl  # only here: most commands never read a CA bundle

    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cafile=path)
    except ssl.SSLError:
        return "is not a PEM CA bundle (no certificate could be read from it)"
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    return None


def index_granted(index_url: str, hosts: tuple[str, ...]) -> bool:
    """Whether an https index URL's host (and port: 443 unless named) is one of ``hosts``
    (each a name, meaning ports 80 and 443, or ``name:port``)."""
    parsed = urlparse(index_url)
    if parsed.scheme != "https" or not parsed.hostname:
        return False
    port = parsed.port or 443
    for grant in hosts:
        name, _, fixed = grant.lower().partition(":")
        if name == parsed.hostname.lower() and (str(port) == fixed if fixed else port == 443):
            return True
    return False


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("kernel", appauthor=False))


class GraphTarget(BaseModel):
    """Where the graph lives, parsed from the graph URI setting."""

    backend: Backend
    uri: str
    database: str | None = None
    data_dir: Path | None = None


_SECRETS = frozenset({"neo4j_password", "anthropic_api_key"})  # never echoed


class KernelSettings(BaseSettings):
    """Kernel configuration; every field can be set as ``KERNEL_<FIELD>``."""

    # An empty KERNEL_DATA_DIR (or any empty KERNEL_*) means unset, not the current directory.
    model_config = SettingsConfigDict(env_prefix="KERNEL_", extra="ignore", env_ignore_empty=True)

    graph: str = Field(
        default="embedded",
        description="embedded | embedded:///DIR | neo4j://HOST:PORT | bolt://HOST:PORT",
    )
    data_dir: Path = Field(default_factory=default_data_dir)
    graph_name: str = Field(default="kernel", description="graph key inside the embedded server")
    embedded_fsync: Literal["always", "everysec"] = "always"
    embeddings: Literal["onnx", "torch"] | None = Field(
        default=None, description="embedding backend (embeddings/encoder.py reads the same "
                                  "variable); default: ONNX Runtime where it is installed")
    neo4j_user: str = Field(default="neo4j", validation_alias="NEO4J_USER")
    neo4j_password: SecretStr | None = Field(default=None, validation_alias="NEO4J_PASSWORD")
    neo4j_warm_up: bool = Field(
        default=True, description="kernel db init on Neo4j also warms the server's plan cache "
        "(kernel db warm; a first run then does not plan each commit as it goes)")
    neo4j_warm_rounds: int = Field(
        default=2, ge=0, le=100, description="times kernel db warm (and db init) rehearse "
        "the scripted workloads on Neo4j after planning them, each rolled back, so that the "
        "server's Java runtime has compiled what a run executes (0: plan only)")
    concurrency: int = Field(default=4, ge=1, le=64,
                             description="calls a run may have in flight at once")
    tau_local: float = Field(default=0.70, ge=0.0, le=1.0)
    sandbox_run_usd: float = Field(
        default=0.01, ge=0.0, description="what one command run in the sandbox is charged "
        "(a test run is one command): the budget's stand-in for the machine's time")
    tau_global: float = Field(default=0.50, ge=0.0, le=1.0)
    claude_retry_delays: tuple[float, ...] = Field(
        default=(1.0, 4.0, 16.0), description="seconds between tries of an unavailable model "
        "(a provider's retry-after can lengthen them); JSON list, e.g. [1, 4, 16]")
    claude_sdk_retries: int = Field(default=2, ge=0, description="the anthropic SDK's own retries")
    claude_model: str = Field(default="claude-opus-5", description="the model claude-code-0 asks")
    repo_max_files: int = Field(default=20_000, ge=1, description="the most files a "
                                "repository snapshot may hold (kernel repo ingest)")
    repo_max_bytes: int = Field(default=200_000_000, ge=1, description="the most bytes a "
                                "repository snapshot may hold, all files together")
    repo_max_file_bytes: int = Field(default=1_000_000, ge=1, description="a file larger "
                                     "than this is recorded (size, hash) but its text not kept")
    anthropic_api_key: SecretStr | None = Field(default=None,
                                                validation_alias="ANTHROPIC_API_KEY")
    registry_hosts: tuple[str, ...] = Field(
        default=PYPI_HOSTS, description="the hosts (name, or name:port) a repository's "
        "dependency install may reach, its only network; JSON list. [] grants none: a "
        "repository with requirements then fails its setup")
    registry_index_url: str = Field(
        default=PYPI_INDEX, description="the package index (PEP 503, https) pip installs "
        "from; its host must be among KERNEL_REGISTRY_HOSTS")
    registry_cert: Path | None = Field(
        default=None, description="a PEM CA bundle pip trusts for the index instead of its "
        "own (pip's --cert: a private index, or a TLS-intercepting proxy's CA); unset, the "
        "host's PIP_CERT when that is a readable bundle, so the sandboxed pip trusts what "
        "the host's pip is told to. Checked when a repository goal starts: a file that is "
        "missing, unreadable or not PEM is refused then")

    @field_validator("registry_index_url")
    @classmethod
    def _index_on_a_registry_host(cls, value: str, info: ValidationInfo) -> str:
        hosts = tuple(info.data.get("registry_hosts") or ())
        if hosts and not index_granted(value, hosts):
            raise ValueError(f"not an https URL on one of KERNEL_REGISTRY_HOSTS {list(hosts)}")
        return value

    @classmethod
    def load(cls, **given: Any) -> KernelSettings:
        """The settings (``given`` are command-line options), or one line naming the
        variable or option that holds a value the kernel cannot use, and why."""
        try:
            return cls(**given)
        except SettingsError as exc:  # a list or mapping whose text is not JSON
            field = exc.args[0].split('"')[1] if exc.args and '"' in str(exc.args[0]) else ""
            raise ConfigError(f"invalid setting KERNEL_{field.upper()}: its value is not JSON "
                              "(a list is written like [1, 4, 16])") from None
        except ValidationError as exc:
            first = exc.errors()[0]
            field = str(first["loc"][0]) if first["loc"] else ""
            info = cls.model_fields.get(field)
            alias = info.validation_alias if info is not None else None
            name = (f"--{field.replace('_', '-')}" if field in given
                    else alias if isinstance(alias, str) else f"KERNEL_{field.upper()}")
            shown = "" if field in _SECRETS or first.get("input") is None \
                else f"={first.get('input')!r}"
            raise ConfigError(f"invalid setting {name}{shown}: {first['msg']}") from None

    def registry_ca(self) -> Path | None:
        """The CA bundle a repository's setup run gives pip: KERNEL_REGISTRY_CERT (a
        ConfigError when it cannot serve: missing, unreadable, not PEM), else the host's
        PIP_CERT when that is a bundle pip could read (otherwise pip's own serves), else
        none. Read when a repository goal is taken in, so other commands never parse it."""
        if self.registry_cert is not None:
            problem = ca_bundle_problem(self.registry_cert)
            if problem is not None:
                raise ConfigError(f"invalid setting KERNEL_REGISTRY_CERT="
                                  f"'{self.registry_cert}': {problem}; give a PEM file of CA "
                                  "certificates")
            return self.registry_cert
        host = os.environ.get("PIP_CERT")
        if host and ca_bundle_problem(Path(host)) is None:
            return Path(host)
        return None

    def target(self) -> GraphTarget:
        """Parse :attr:`graph` into a backend choice, failing with a fix-it message."""
        return parse_graph_uri(self.graph, self.data_dir, self.graph_name)


def parse_graph_uri(uri: str, data_dir: Path, graph_name: str) -> GraphTarget:
    text = uri.strip()
    if text in ("", "embedded"):
        return GraphTarget(backend="embedded", uri="embedded", database=graph_name,
                           data_dir=data_dir)
    parsed = urlparse(text)
    query = parse_qs(parsed.query)
    if parsed.scheme == "embedded":
        directory = Path(parsed.path) if parsed.path else data_dir
        name = query.get("graph", [graph_name])[0]
        return GraphTarget(backend="embedded", uri=text, database=name, data_dir=directory)
    if parsed.scheme in NEO4J_SCHEMES:
        if not parsed.hostname:
            raise ConfigError(f"graph URI {uri!r} has no host; use e.g. neo4j://localhost:7687")
        clean = f"{parsed.scheme}://{parsed.netloc}"
        database = query.get("database", [None])[0]
        return GraphTarget(backend="neo4j", uri=clean, database=database)
    raise ConfigError(
        f"graph URI {uri!r} is not understood: use 'embedded' (the default), "
        "'embedded:///path/to/dir', or 'neo4j://host:7687' / 'bolt://host:7687'"
    )
