"""A large file is kept in the graph as chunks by line range (both stores): each chunk
holds its lines whole, the file keeps no text of its own, and a re-ingest after the file
shrinks leaves no chunk of the old text behind."""

from __future__ import annotations

from pathlib import Path

from kernel.codebase.ingest import CHUNK_LINES, ingest, repo_id
from kernel.settings import KernelSettings
from kernel.store.base import GraphStore


def _node(store: GraphStore, label: str, node_id: str) -> dict | None:  # type: ignore[type-arg]
    rows = store.run("lookup/node", {"id": node_id}, identifiers={"label": label})
    return rows[0] if rows else None


def test_a_large_file_is_held_as_chunks_of_whole_lines(initialised: GraphStore,
                                                        tmp_path: Path) -> None:
    lines = [f"VALUE_{i} = {i}\n" for i in range(CHUNK_LINES * 2 + 50)]
    (tmp_path / "big.py").write_text("".join(lines))
    (tmp_path / "small.py").write_text("X = 1\n")
    ingest(initialised, tmp_path, KernelSettings())
    repo = repo_id(tmp_path.resolve())

    big = _node(initialised, "File", f"file:{repo}:big.py")
    assert big is not None and big["props"].get("text") is None
    held = sorted(n["id"] for n in big["neighbours"] if n["label"] == "Chunk")
    starts = [1, CHUNK_LINES + 1, 2 * CHUNK_LINES + 1]
    assert held == sorted(f"chunk:{repo}:big.py:{s}" for s in starts)
    texts = []
    for start in starts:
        chunk = _node(initialised, "Chunk", f"chunk:{repo}:big.py:{start}")
        assert chunk is not None
        props = chunk["props"]
        end = min(start + CHUNK_LINES - 1, len(lines))
        assert (props["start_line"], props["end_line"]) == (start, end)
        assert props["caption"] == f"big.py:{start}-{end}"
        texts.append(props["text"])
    assert "".join(texts) == "".join(lines)

    small = _node(initialised, "File", f"file:{repo}:small.py")
    assert small is not None and small["props"]["text"] == "X = 1\n"
    assert not [n for n in small["neighbours"] if n["label"] == "Chunk"]

    (tmp_path / "big.py").write_text("".join(lines[:10]))
    ingest(initialised, tmp_path, KernelSettings())
    assert _node(initialised, "Chunk", f"chunk:{repo}:big.py:1") is None
    assert _node(initialised, "File", f"file:{repo}:big.py")["props"]["text"] == "".join(  # type: ignore[index]
        lines[:10])
