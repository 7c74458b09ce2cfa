"""Typed exceptions: every failure a user can cause says what is wrong and how to fix it.

The CLI turns any :class:`KernelError` into a one-line message and a non-zero
exit code; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class KernelError(Exception):
    """Base class for errors the kernel reports to the user."""


class ConfigError(KernelError):
    """A setting (environment variable or option) has a value the kernel cannot use."""


class StoreError(KernelError):
    """The graph store refused or failed an operation."""


class StoreUnavailableError(StoreError):
    """The graph store cannot be reached or started."""


class StatementError(StoreError):
    """A Cypher statement failed inside the store; nothing it wrote was kept."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"query '{name}' failed: {message}")
        self.name = name
        self.db_message = message


class QueryCatalogError(KernelError):
    """A named query was asked for in a way the catalogue cannot serve."""


class UnknownQueryError(QueryCatalogError):
    """No ``.cypher`` file carries the requested name."""


class ParameterError(QueryCatalogError):
    """The parameters given do not match the ones the statement uses."""


class TemplateError(QueryCatalogError):
    """A statement template was rendered with an identifier outside the ontology."""


class GraphFileError(KernelError):
    """A graph export file is malformed; names the line so it can be fixed."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line
        self.reason = message


class SchemaVersionError(KernelError):
    """The graph was written by a newer kernel than this one."""


class RunInterrupted(KernelError):
    """Ctrl-C or SIGTERM stopped a run between two commits, or its store went away under
    it (``because``); either way it stands at its last commit and can be resumed."""

    def __init__(self, run_id: str, because: str | None = None) -> None:
        if because is None:
            super().__init__(f"{run_id} interrupted; continue with: kernel resume {run_id}")
        else:
            super().__init__(f"{run_id} stopped at its last commit: {because}; once the store "
                             f"answers again, continue with: kernel resume {run_id}")
        self.run_id = run_id


class Refused(KernelError):
    """The kernel refused the work itself (not the input): exit code 1, with the report."""


def yaml_problem(exc: Exception) -> str:
    """A YAML parse error on one line: where it is and what is wrong (PyYAML's own
    message spans several lines and quotes the text around the mark)."""
    mark, problem = getattr(exc, "problem_mark", None), getattr(exc, "problem", None)
    if mark is not None and problem:
        return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
    return " ".join(str(exc).split())

