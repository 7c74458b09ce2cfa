"""A codebase as a graph: its files, chunks and symbols written, linked and read back
(``cypher/repo/``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict, cast

from kernel.store.base import GraphStore


class SymbolRow(TypedDict):
    id: str
    qname: str
    kind: str
    file: str
    line: int
    signature: str


class TestRow(TypedDict):
    id: str
    qname: str
    file: str
    line: int


class RelatedRow(TypedDict):
    kind: str  # symbol | file
    name: str
    file: str
    line: int


class NearRow(TypedDict):
    name: str  # the symbol's qualified name
    file: str
    line: int
    similarity: float  # (1 + cos) / 2


def known_files(store: GraphStore, repo: str) -> dict[str, str]:
    """Path -> content hash of what the repository held when last ingested."""
    return {r["path"]: r["sha256"] for r in store.run("repo/known_files", {"repo": repo})}


def store_repository(store: GraphStore, repo: str, root: str, tree_hash: str,
                     files: int) -> None:
    store.run("repo/store_repository", {"id": repo, "root": root, "tree_hash": tree_hash,
                                        "files": files})


def remove_files(store: GraphStore, repo: str, paths: Sequence[str]) -> None:
    if paths:
        store.run("repo/remove_files", {"repo": repo, "paths": list(paths)})


def clear_parts(store: GraphStore, repo: str, paths: Sequence[str]) -> None:
    if paths:
        store.run("repo/clear_parts", {"repo": repo, "paths": list(paths)})


def store_parts(store: GraphStore, files: list[dict[str, Any]], symbols: list[dict[str, Any]],
                chunks: list[dict[str, Any]]) -> None:
    """Files first (symbols and chunks are matched to them), in batches of rows."""
    store.run_batched("repo/store_files", files, batch_size=200)
    store.run_batched("repo/store_symbols", symbols, batch_size=1000)
    store.run_batched("repo/store_chunks", chunks, batch_size=200)


def set_symbol_embeddings(store: GraphStore, rows: list[dict[str, Any]]) -> None:
    """``rows``: {id, vector} per symbol."""
    store.run_batched("repo/set_symbol_embeddings", rows, batch_size=500)


def symbols_near(store: GraphStore, repo: str, vector: list[float], candidates: int,
                 k: int) -> list[NearRow]:
    return cast(list[NearRow], store.run("repo/symbols_near", {
        "repo": repo, "vector": vector, "candidates": candidates, "k": k}))


def link(store: GraphStore, repo: str, paths: Sequence[str], qnames: Sequence[str],
         *, incremental: bool) -> None:
    """CALLS, IMPORTS and TESTS edges for the files in ``paths``; on a re-ingest, also
    the edges from unchanged files into them."""
    given = {"repo": repo, "paths": list(paths)}
    store.run("repo/link_calls_from", given)
    store.run("repo/link_imports_from", given)
    if incremental:
        store.run("repo/link_calls_into", {**given, "qnames": list(qnames)})
        store.run("repo/link_imports_into", given)
    store.run("repo/link_tests", given)


def symbols_named(store: GraphStore, repo: str, name: str) -> list[SymbolRow]:
    return cast(list[SymbolRow], store.run(
        "repo/symbols_named", {"repo": repo, "name": name, "suffix": f".{name}"}))


def symbols_in_files(store: GraphStore, repo: str, paths: Sequence[str]) -> list[SymbolRow]:
    return cast(list[SymbolRow], store.run("repo/symbols_in_files",
                                           {"repo": repo, "paths": sorted(set(paths))}))


def callers(store: GraphStore, ids: Sequence[str]) -> list[SymbolRow]:
    return cast(list[SymbolRow], store.run("repo/callers", {"ids": list(ids)}))


def importers(store: GraphStore, ids: Sequence[str]) -> list[dict[str, Any]]:
    return store.run("repo/importers", {"ids": list(ids)})


def covering_tests(store: GraphStore, ids: Sequence[str]) -> list[TestRow]:
    rows = cast(list[TestRow], store.run("repo/covering_tests", {"ids": list(ids)}))
    unique = {r["id"]: r for r in rows}
    return sorted(unique.values(), key=lambda r: (r["file"], r["line"], r["qname"]))


def related(store: GraphStore, repo: str, words: Sequence[str]) -> list[RelatedRow]:
    rows = cast(list[RelatedRow], store.run("repo/related_symbols",
                                            {"repo": repo, "words": sorted(set(words))}))
    return sorted(rows, key=lambda r: (r["file"], r["line"], r["kind"], r["name"]))


def size(store: GraphStore, repo: str) -> dict[str, int]:
    return {r["name"]: int(r["count"]) for r in store.run("repo/size", {"repo": repo})}
