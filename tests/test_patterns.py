"""Goal patterns through the vector index, with the constraint-signature filter."""

from __future__ import annotations

from pathlib import Path

from embeddings.encoder import DIMENSIONS, Encoder
from kernel.kg.patterns import Patterns, normalize, pattern_id
from kernel.store import GraphStore

CODE = (("logic", "software"), ("semantic", "usability"))
PROSE = (("semantic", "style"),)


def test_similar_goals_find_each_other_and_dissimilar_ones_do_not(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    patterns = Patterns(initialised_graph, Encoder(tmp_path / "embeddings.sqlite"))
    for text in ("Build a Python CLI that prints the top rows of a CSV sorted by a column",
                 "Plan the launch party for the new office",
                 "Write a command-line tool that sorts a CSV file by one column"):
        found = patterns.similar(text, CODE)  # found first: the search leaves it out
        patterns.ensure(text, CODE, found)
    assert [s.summary for s in found] == [
        "Build a Python CLI that prints the top rows of a CSV sorted by a column"]
    assert 0.8 <= found[0].similarity <= 1.0
    edges = initialised_graph.run("admin/count_by_type", {})
    assert {r["type"]: r["relationships"] for r in edges}.get("SIMILAR_TO") == 2  # both ways


def test_same_words_with_another_constraint_signature_share_nothing(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    patterns = Patterns(initialised_graph, Encoder(tmp_path / "embeddings.sqlite"))
    text = "Write a command-line tool that sorts a CSV file by one column"
    patterns.ensure(text, CODE)
    assert pattern_id(text, CODE) != pattern_id(text, PROSE)
    assert patterns.similar(text, PROSE) == []  # same words, other structure: no history
    assert patterns.similar(text + " quickly", CODE)[0].id == pattern_id(text, CODE)


def test_embeddings_are_cached_by_content(tmp_path: Path) -> None:
    cache = tmp_path / "embeddings.sqlite"
    first = Encoder(cache)
    vectors = first.encode(["Sort a CSV", "Sort a CSV", "Plan a launch"])
    assert first.embedded == 2 and len(vectors[0]) == DIMENSIONS
    assert abs(sum(x * x for x in vectors[0]) - 1.0) < 1e-5  # normalized
    again = Encoder(cache)  # a new process would start here
    assert again.encode(["Plan a launch", "Sort a CSV"]) == [vectors[2], vectors[0]]
    assert again.embedded == 0
    assert normalize("  Sort, a CSV!  ") == "sort a csv"
