"""The resolvers this process uses, handed to the kernel rather than imported by it: the
set another package names under the ``kernel.resolvers`` entry point, or the shipped one
(``resolvers/registry.py``, which this project's own entry point names) when none does.
Loaded once, at first use, so a command that calls no resolver loads none."""

from __future__ import annotations

import functools
from importlib.metadata import EntryPoint, entry_points

from kernel.errors import ConfigError
from kernel.protocol.resolver_set import ResolverSet

GROUP = "kernel.resolvers"
SHIPPED = EntryPoint(name="shipped", value="resolvers.registry:SHIPPED", group=GROUP)


@functools.cache
def resolvers() -> ResolverSet:
    """The installed resolver set."""
    named = sorted((p for p in entry_points(group=GROUP) if p.value != SHIPPED.value),
                   key=lambda point: point.name)
    if len(named) > 1:
        raise ConfigError(f"{len(named)} resolver sets are installed "
                          f"({', '.join(p.value for p in named)}): keep one")
    point = named[0] if named else SHIPPED
    found = point.load()
    if not isinstance(found, ResolverSet):
        raise ConfigError(f"the resolver set {point.value} is not a ResolverSet "
                          "(kernel.protocol.resolver_set)")
    return found
