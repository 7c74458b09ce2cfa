"""How the kernel comes by its resolvers: the set an installed package names under the
``kernel.resolvers`` entry point, else the shipped one; never an import of its own."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from kernel.errors import ConfigError
from kernel.runtime import installed
from resolvers import registry

EXAMPLE = Path(__file__).resolve().parents[1] / "seeds/examples/csv-cli.script.yaml"


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    installed.resolvers.cache_clear()
    yield
    installed.resolvers.cache_clear()


def _named(monkeypatch: pytest.MonkeyPatch, *values: str) -> None:
    points = [EntryPoint(name=f"set{i}", value=v, group=installed.GROUP)
              for i, v in enumerate(values)]
    monkeypatch.setattr(installed, "entry_points", lambda group: points)


def test_with_no_entry_point_the_shipped_set_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    _named(monkeypatch)
    assert installed.resolvers() is registry.SHIPPED
    installed.resolvers.cache_clear()
    _named(monkeypatch, "resolvers.registry:SHIPPED")  # this project's own entry point
    assert installed.resolvers() is registry.SHIPPED
    proposer = installed.resolvers().scripted(EXAMPLE, None)
    assert (proposer.kind, proposer.model) == ("scripted", EXAMPLE.name)


def test_an_entry_point_replaces_the_shipped_set(monkeypatch: pytest.MonkeyPatch) -> None:
    _named(monkeypatch, "resolvers.registry:SHIPPED", f"{__name__}:OTHER")
    assert installed.resolvers() is OTHER


def test_two_sets_or_something_else_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _named(monkeypatch, f"{__name__}:OTHER", f"{__name__}:ANOTHER", "resolvers.registry:SHIPPED")
    with pytest.raises(ConfigError, match="2 resolver sets are installed"):
        installed.resolvers()
    installed.resolvers.cache_clear()
    _named(monkeypatch, f"{__name__}:EXAMPLE")
    with pytest.raises(ConfigError, match="is not a ResolverSet"):
        installed.resolvers()


OTHER = dataclasses.replace(registry.SHIPPED)
ANOTHER = dataclasses.replace(registry.SHIPPED)
