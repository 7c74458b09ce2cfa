"""The parameter header the embedded backend builds is the client's, byte for byte."""

from __future__ import annotations

from typing import Any

import pytest
from falkordb import Graph
from hypothesis import given, settings
from hypothesis import strategies as st

from kernel.store.falkordb_params import params_header
from kernel.store.values import plain


def _client_header(params: dict[str, Any]) -> str:
    header: str = Graph._build_params_header(Graph.__new__(Graph), params)
    return header


_keys = st.text(alphabet=st.characters(blacklist_characters="`", blacklist_categories=("Cs",)),
                min_size=1, max_size=6)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(),
                     st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner),
    st.dictionaries(_keys, inner, max_size=4)), max_leaves=12)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_keys, _values, max_size=5))
def test_the_header_is_the_clients(params: dict[str, Any]) -> None:
    assert params_header(params) == _client_header(params)


@pytest.mark.parametrize("bad", [{"a`b": 1}, {"": 1}, {"rows": [{"x`y": 1}]}])
def test_a_name_that_cannot_go_between_backticks_is_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"backtick|empty"):
        params_header(bad)
    with pytest.raises(ValueError):
        _client_header(bad)


def test_maps_from_the_driver_come_back_as_plain_dicts() -> None:
    from collections import OrderedDict

    value = OrderedDict([("a", 1), ("b", [1, 2]), ("c", None)])
    converted = plain(value)
    assert type(converted) is dict and converted == {"a": 1, "b": [1, 2], "c": None}
    nested = plain({"m": OrderedDict([("x", OrderedDict([("y", 1)]))])})
    assert nested == {"m": {"x": {"y": 1}}} and type(nested["m"]["x"]) is dict
