"""The repository a run works on, as its inputs record it: where it is and the tree hash
of the snapshot the run started from, so resume and replay work on the same code (a
tree that changed since is refused, never silently used)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class RepoInput(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    root: str = Field(description="the repository's top directory, absolute")
    tree_hash: str = Field(description="sha256 over the snapshot's paths and content hashes")
    test_cmd: list[str] | None = Field(default=None, description="the command whose exit "
                                       "status decides the suite (none: pytest on the "
                                       "repository's test files)")
