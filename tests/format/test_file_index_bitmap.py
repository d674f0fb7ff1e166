"""The ``bitmap`` file index (lakestore.format.fileindex.bitmap): answers against an in-memory model
(each value's row positions in a Python list), Java's HashMap order (vectorised and replayed),
Java's bytes checked in and live through the Paimon 2.0 oracle (lakestore writes Java's bytes and
gives Java's answers reading them), and invalid input."""

from __future__ import annotations

import datetime
import math
import struct
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakestore.errors import CorruptMetadataError, OptionError, UnsupportedTableError, UnsupportedTypeError
from lakestore.format.fileindex.bitmap import BitmapIndexType
from lakestore.format.fileindex.java_hashmap import hashmap_order, simulate_order
from lakestore.format.types import parse_type
from tests.format.file_index_support import answer, build, rows
from tests.oracle.java_driver import java_oracle

BITMAP = BitmapIndexType()


def _build(type_text: str, values: list[Any], options: dict[str, str] | None = None, chunks: int = 1) -> bytes:
    return build(BITMAP, type_text, values, options, chunks)


_answer = answer
_rows = rows


def _model(values: list[Any], op: str, literal: Any = None) -> list[int]:
    """Java's answers from the values themselves: not-equal and not-in keep the nulls."""
    if op == "equal":
        return [i for i, v in enumerate(values) if v is not None and v == literal]
    if op == "not_equal":
        return [i for i, v in enumerate(values) if v is None or v != literal]
    if op == "in":
        return [i for i, v in enumerate(values) if v is not None and v in literal]
    if op == "not_in":
        return [i for i, v in enumerate(values) if v is None or v not in literal]
    if op == "is_null":
        return [i for i, v in enumerate(values) if v is None]
    return [i for i, v in enumerate(values) if v is not None]


# ---------------------------------------------------------------- against the model


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.none() | st.integers(-40, 40), max_size=400),
    st.sampled_from([{}, {"version": "1"}, {"index-block-size": "40b"}]),
    st.integers(1, 3),
    st.lists(st.integers(-45, 45), min_size=1, max_size=4),
)
def test_int_answers_match_the_model(values: list[int | None], options: dict[str, str], chunks: int, probes: list[int]) -> None:
    data = _build("INT", values, options, chunks)
    reader = BITMAP.reader(parse_type("INT"), options, data)
    for op, literal in [
        ("equal", probes[0]),
        ("not_equal", probes[0]),
        ("in", probes),
        ("not_in", probes),
        ("is_null", None),
        ("is_not_null", None),
    ]:
        expected = _model(values, op, literal)
        got = _answer(reader, op, literal)
        assert got == expected, (op, literal)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.none() | st.sampled_from(["", "a", "b", "ab", "é", "日本", "x" * 30, "a\x00b"]), max_size=200),
    st.sampled_from([{}, {"version": "1"}, {"index-block-size": "20b"}]),
)
def test_string_answers_match_the_model(values: list[str | None], options: dict[str, str]) -> None:
    reader = BITMAP.reader(parse_type("STRING"), options, _build("STRING", values, options))
    for literal in ["", "a", "é", "日本", "zz", "x" * 30]:
        assert _answer(reader, "equal", literal) == _model(values, "equal", literal)
        assert _answer(reader, "not_equal", literal) == _model(values, "not_equal", literal)
    assert _answer(reader, "in", ["a", "b", "missing"]) == _model(values, "in", ["a", "b", "missing"])
    assert _answer(reader, "is_null") == _model(values, "is_null")


@settings(max_examples=30, deadline=None)
@given(st.lists(st.none() | st.sampled_from([0.0, -0.0, 1.5, -2.25, math.inf, -math.inf, math.nan]), max_size=100))
def test_double_keys_are_java_objects(values: list[float | None]) -> None:
    """Keys compare as Java's Double.equals: NaN equals NaN, -0.0 is not 0.0."""
    reader = BITMAP.reader(parse_type("DOUBLE"), {}, _build("DOUBLE", values))

    def same(a: float | None, b: float) -> bool:
        return a is not None and struct.pack(">d", a) == struct.pack(">d", b)

    for literal in [0.0, -0.0, 1.5, math.nan, math.inf, 7.0]:
        assert _answer(reader, "equal", literal) == [i for i, v in enumerate(values) if same(v, literal)]


def test_all_null_empty_and_single_rows() -> None:
    for values in ([], [None], [None, None, None], [7], [7, 7], [None, 7]):
        reader = BITMAP.reader(parse_type("INT"), {}, _build("INT", values))
        for op in ("equal", "not_equal", "is_null", "is_not_null"):
            assert _answer(reader, op, 7) == _model(values, op, 7), (values, op)


def test_timestamps_dates_and_literals_of_other_kinds() -> None:
    stamps = [datetime.datetime(2024, 1, 1, 12, 0, 0, 1000), None, datetime.datetime(1969, 12, 31, 23, 59, 59, 999000)]
    reader = BITMAP.reader(parse_type("TIMESTAMP(3)"), {}, _build("TIMESTAMP(3)", stamps))
    assert _answer(reader, "equal", stamps[0]) == [0]
    assert _answer(reader, "equal", stamps[2]) == [2]  # before the epoch: floor milliseconds
    # a literal between two milliseconds matches no row
    assert _answer(reader, "equal", stamps[0] + datetime.timedelta(microseconds=1)) == []
    days = [datetime.date(2024, 2, 29), datetime.date(1960, 1, 1), None]
    reader = BITMAP.reader(parse_type("DATE"), {}, _build("DATE", days))
    assert _answer(reader, "equal", datetime.date(1960, 1, 1)) == [1]
    # a literal the type cannot hold leaves the decision to the data
    assert reader.equal("not a date").rows is None


# ---------------------------------------------------------------- Java's HashMap order


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), max_size=400), st.integers(0, 14), st.booleans())
def test_vectorised_hashmap_order_equals_the_replayed_map(hashes: list[int], low_bits: int, resize_after_last: bool) -> None:
    # hashes sharing their low bits crowd into few buckets (resizes from long lists, tree bins);
    # equal hashes of distinct keys order the trees by the keys
    mask = ~((1 << low_bits) - 1) & 0xFFFFFFFF
    crowded = [(h & mask) | 5 for h in hashes]
    keys = [(i * 7919) % 1_000_003 for i in range(len(hashes))]
    for case in (hashes, crowded):
        arr = np.array(case, dtype=np.uint32)
        replayed = simulate_order(arr, resize_after_last, keys)
        assert sorted(replayed.tolist()) == list(range(len(case)))
        assert hashmap_order(arr, resize_after_last, lambda: keys).tolist() == replayed.tolist()


def test_hashmap_order_without_keys_refuses_trees() -> None:
    hashes = np.arange(0, 2000 * 1024, 1024, dtype=np.uint32)  # low bits all zero
    with pytest.raises(ValueError, match="tree"):
        hashmap_order(hashes, True)


# ---------------------------------------------------------------- Java's bytes


GOLDEN = [
    # BitmapFileIndex (Paimon 2.0.0) over [1, 2, null, 1, 3, null, 2, 2]
    (
        "INT",
        [1, 2, None, 1, 3, None, 2, 2],
        {},
        "020000000800000003010000000000000014000000010000000100000000000000280000000300000001000000140000001400000002000000280000"
        "001600000003fffffffbffffffff3a300000010000000000010010000000020005003a300000010000000000010010000000000003003a30000001"
        "0000000000020010000000010006000700",
    ),
    (
        "INT",
        [1, 2, None, 1, 3, None, 2, 2],
        {"version": "1"},
        "01000000080000000301000000000000000100000014000000020000002800000003fffffffb3a300000010000000000010010000000020005003a"
        "300000010000000000010010000000000003003a300000010000000000020010000000010006000700",
    ),
    (
        "STRING",
        ["b", "a", None, "b", "é"],
        {},
        "02000000050000000301fffffffd00000012000000010000000161000000000000002c000000030000000161fffffffeffffffff00000001620000"
        "00000000001400000002c3a9fffffffbffffffff3a30000001000000000001001000000000000300",
    ),
]


@pytest.mark.parametrize(("type_text", "values", "options", "java_hex"), GOLDEN)
def test_bytes_equal_checked_in_java_bytes(type_text: str, values: list[Any], options: dict[str, str], java_hex: str) -> None:
    assert _build(type_text, values, options).hex() == java_hex
    reader = BITMAP.reader(parse_type(type_text), options, bytes.fromhex(java_hex))
    for literal in {v for v in values if v is not None}:
        assert _answer(reader, "equal", literal) == _model(values, "equal", literal)
    assert _answer(reader, "is_null") == _model(values, "is_null")


def _oracle_cases() -> list[tuple[str, list[Any], dict[str, str], list[Any], list[Any] | None]]:
    """(type, values for Java, options, queries' literals, values for Arrow when they differ)."""
    rng = np.random.default_rng(11)
    ints = [None if x < 0 else int(x) for x in rng.integers(-20, 200, 3000)]
    doubles = [float(x) for x in rng.integers(0, 400, 3000)]  # integral doubles crowd Java's buckets: tree bins
    strings = [f"k{x}" for x in rng.integers(0, 2500, 6000)]
    micros = [int(x) * 1000 for x in rng.integers(-500, 500, 300)]
    return [
        ("INT", ints, {}, [0, 5, 199, 1000], None),
        ("INT", ints, {"version": "1"}, [0, 5, 199], None),
        ("BIGINT", [int(x) << 33 for x in rng.integers(-300, 300, 2000)], {}, [0, 5 << 33], None),
        ("DOUBLE", doubles, {}, [0.0, 17.0, 399.0, 0.5], None),
        (
            "FLOAT",
            [0.0, -0.0, "NaN", 1.5, None, -2.5, 1.5, "NaN"],
            {},
            [0.0, -0.0, "NaN", 1.5],
            [0.0, -0.0, math.nan, 1.5, None, -2.5, 1.5, math.nan],
        ),
        ("STRING", strings, {}, ["k0", "k17", "nope"], None),
        ("STRING", strings, {"index-block-size": "1kb"}, ["k0", "k2499"], None),
        ("STRING", ["", "é", "日本語", None, "", "a" * 100], {}, ["", "日本語"], None),
        ("BOOLEAN", [True, None, False, True, True], {}, [True, False], None),
        ("TINYINT", [int(x) for x in rng.integers(-128, 128, 1000)], {}, [-128, 0, 127], None),
        ("SMALLINT", [int(x) for x in rng.integers(-3000, 3000, 3000)], {}, [0, 2999], None),
        ("DATE", [int(x) for x in rng.integers(-1000, 20000, 500)], {}, [0], None),
        ("TIMESTAMP(3)", micros, {}, [micros[0]], None),
        ("TIMESTAMP(6)", micros, {}, [micros[0]], None),
    ]


def _arrow_value(type_text: str, value: Any) -> Any:
    if value is None:
        return None
    if type_text.startswith("TIMESTAMP"):
        return datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=value)
    if type_text == "DATE":
        return datetime.date(1970, 1, 1) + datetime.timedelta(days=value)
    if value == "NaN":
        return math.nan
    return value


@pytest.mark.oracle
def test_bytes_and_answers_equal_java() -> None:
    java = java_oracle()
    for type_text, values, options, literals, arrow_values in _oracle_cases():
        queries = [{"op": op, "literal": lit} for lit in literals for op in ("equal", "not_equal")]
        queries += [
            {"op": "in", "literals": literals},
            {"op": "not_in", "literals": literals[:2]},
            {"op": "is_null"},
            {"op": "is_not_null"},
        ]
        java_bytes, java_answers = java.file_index("bitmap", type_text, values, options=options, queries=queries)
        ours_values = arrow_values if arrow_values is not None else [_arrow_value(type_text, v) for v in values]
        assert _build(type_text, ours_values, options, chunks=2) == java_bytes, (type_text, options)
        reader = BITMAP.reader(parse_type(type_text), options, java_bytes)
        for query, java_answer in zip(queries, java_answers, strict=True):
            literal = query.get("literal", query.get("literals"))
            literal = [_arrow_value(type_text, v) for v in literal] if isinstance(literal, list) else _arrow_value(type_text, literal)
            assert _answer(reader, query["op"], literal) == java_answer, (type_text, query)


# ---------------------------------------------------------------- invalid input


def test_unsupported_types_and_options() -> None:
    assert not BITMAP.supports(parse_type("DECIMAL(10, 2)"))
    assert not BITMAP.supports(parse_type("BYTES"))
    assert BITMAP.supports(parse_type("TIMESTAMP(9) WITH LOCAL TIME ZONE"))
    with pytest.raises(UnsupportedTypeError):
        BITMAP.writer(parse_type("DECIMAL(10, 2)"), {})
    with pytest.raises(OptionError, match="version"):
        BITMAP.writer(parse_type("INT"), {"version": "3"})
    with pytest.raises(OptionError, match="index-block-size"):
        BITMAP.writer(parse_type("INT"), {"index-block-size": "lots"})


def test_corrupt_and_newer_bytes() -> None:
    data = _build("INT", [1, 2, 2, None, None])
    with pytest.raises(CorruptMetadataError):
        BITMAP.reader(parse_type("INT"), {}, data[:7])
    with pytest.raises(CorruptMetadataError):
        BITMAP.reader(parse_type("INT"), {}, b"")
    with pytest.raises(UnsupportedTableError, match="version 3"):
        BITMAP.reader(parse_type("INT"), {}, b"\x03" + data[1:])
    # a bitmap cut short fails when it is read
    reader = BITMAP.reader(parse_type("INT"), {}, data[:-3])
    with pytest.raises(CorruptMetadataError):
        reader.equal(2)
