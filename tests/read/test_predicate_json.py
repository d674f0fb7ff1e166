"""Predicates and literal values as JSON (lakestore/read/predicate_json.py): every predicate kind
and every literal type comes back equal and of the same type; unknown kinds, tags and keys are
refused by name."""

from __future__ import annotations

import datetime
import decimal
import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lakestore
from lakestore.read.predicate import COMPARE_OPS, And, Compare, IsIn, IsNull, Not, Or
from lakestore.read.predicate_json import predicate_from_json, predicate_to_json, value_from_json, value_to_json

UTC = datetime.UTC
values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(),
    st.binary(),
    st.dates(),
    st.datetimes(),
    st.datetimes(timezones=st.just(UTC)),
    st.datetimes(timezones=st.builds(datetime.timezone, st.integers(-14 * 60, 14 * 60).map(lambda m: datetime.timedelta(minutes=m)))),
    st.times(),
    st.decimals(allow_nan=False, allow_infinity=False),
)
columns = st.text(min_size=1, max_size=8)
leaves = st.one_of(
    st.builds(Compare, columns, st.sampled_from(COMPARE_OPS), values),
    st.builds(IsIn, columns, st.lists(values, max_size=4).map(tuple)),
    st.builds(IsNull, columns, st.booleans()),
)
predicates = st.recursive(
    leaves,
    lambda inner: st.one_of(st.builds(And, inner, inner), st.builds(Or, inner, inner), st.builds(Not, inner)),
    max_leaves=8,
)


def _through_text(doc):
    """As the document travels: JSON text and back."""
    return json.loads(json.dumps(doc, allow_nan=False))


def _same(a, b) -> bool:
    """Equal, of the same type, and for aware timestamps at the same offset."""
    if type(a) is not type(b):
        return False
    if isinstance(a, datetime.datetime) and a.utcoffset() != b.utcoffset():
        return False
    if isinstance(a, decimal.Decimal):
        return a.as_tuple() == b.as_tuple()  # digits and exponent: 1.50 stays 1.50
    return a == b


@given(values)
def test_every_literal_type_round_trips_exactly(value):
    back = value_from_json(_through_text(value_to_json(value)))
    assert _same(back, value)


@given(predicates)
def test_every_predicate_kind_round_trips(predicate):
    back = predicate_from_json(_through_text(predicate_to_json(predicate)))
    assert back == predicate
    for a, b in zip(_leaves(back), _leaves(predicate), strict=True):
        assert all(_same(x, y) for x, y in zip(_literals(a), _literals(b), strict=True))


def _leaves(p):
    if isinstance(p, And | Or):
        return _leaves(p.left) + _leaves(p.right)
    if isinstance(p, Not):
        return _leaves(p.inner)
    return [p]


def _literals(p):
    return [p.value] if isinstance(p, Compare) else list(p.values) if isinstance(p, IsIn) else []


def test_the_literals_partitions_need_are_tagged():
    assert value_to_json(datetime.date(2024, 1, 2)) == {"date": "2024-01-02"}
    assert value_to_json(decimal.Decimal("12.340")) == {"decimal": "12.340"}
    assert value_to_json(b"\x00\xff") == {"bytes": "00ff"}
    assert value_to_json(datetime.datetime(2024, 1, 2, 3, 4, 5, 6)) == {"timestamp": "2024-01-02T03:04:05.000006"}
    assert value_to_json(datetime.datetime(2024, 1, 2, tzinfo=UTC)) == {"timestamp": "2024-01-02T00:00:00.000000+00:00"}
    assert value_to_json(np.int64(7)) == 7 and value_to_json(np.float32(0.5)) == 0.5
    for special in (math.nan, math.inf, -math.inf):
        back = value_from_json(_through_text(value_to_json(special)))
        assert isinstance(back, float) and (math.isnan(back) if math.isnan(special) else back == special)
    assert value_from_json(value_to_json(-0.0)) == 0.0 and math.copysign(1, value_from_json(value_to_json(-0.0))) == -1


def test_the_filter_helpers_build_round_trip():
    pred = (lakestore.col("dt") == datetime.date(2024, 1, 1)) & ~lakestore.col("v").isin([b"a", None]) | lakestore.col("x").is_not_null()
    assert predicate_from_json(_through_text(predicate_to_json(pred))) == pred
    between = lakestore.col("d").between(decimal.Decimal("1.0"), decimal.Decimal("2.50"))
    assert predicate_from_json(predicate_to_json(between)) == between


@pytest.mark.parametrize(
    ("doc", "match"),
    [
        ({"kind": "like", "column": "a", "pattern": "x%"}, "unknown predicate kind 'like'"),
        ({"kind": "compare", "column": "a", "op": "==", "value": 1, "extra": 1}, r"unknown keys \['extra'\]"),
        ({"kind": "compare", "column": "a", "op": "=="}, r"missing keys \['value'\]"),
        ({"kind": "compare", "column": "a", "op": "~", "value": 1}, "unknown op"),
        ({"kind": "compare", "column": "", "op": "==", "value": 1}, "column name"),
        ({"kind": "in", "column": "a", "values": 1}, "must be a list"),
        ({"kind": "is_null", "column": "a", "negated": "no"}, "boolean"),
        ({"kind": "not", "inner": {"kind": "nope"}}, "unknown predicate kind 'nope'"),
        ({"kind": "compare", "column": "a", "op": "==", "value": {"uuid": "x"}}, "unknown value tag 'uuid'"),
        ({"kind": "compare", "column": "a", "op": "==", "value": {"date": "2024-13-01"}}, "date"),
        ({"kind": "compare", "column": "a", "op": "==", "value": {"date": 1}}, "takes a string"),
        ({"kind": "compare", "column": "a", "op": "==", "value": [1, 2]}, "not a value"),
        ([], "not a predicate"),
    ],
)
def test_unknown_kinds_tags_and_keys_are_refused(doc, match):
    with pytest.raises(ValueError, match=match):
        predicate_from_json(doc)


def test_values_without_an_exact_form_are_refused():
    with pytest.raises(ValueError, match="list"):
        value_to_json([1, 2])
    with pytest.raises(ValueError, match="no JSON form"):
        predicate_to_json(type("Custom", (lakestore.Predicate,), {"to_arrow": None, "columns": None, "might_match": None})())
