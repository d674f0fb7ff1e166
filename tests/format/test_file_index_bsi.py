"""The ``bsi`` file index (lakestore.format.fileindex.bsi): answers against an in-memory model (the
values in a Python list), Java's bytes checked in and live through the Paimon 2.0 oracle
(lakestore writes Java's bytes and gives Java's answers reading them), and invalid input."""

from __future__ import annotations

import datetime
import decimal
import operator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lakestore
from lakestore import col
from lakestore.errors import CorruptMetadataError, UnsupportedTableError, UnsupportedTypeError
from lakestore.format.fileindex.bsi import BsiIndexType
from lakestore.format.types import parse_type
from tests.format.file_index_support import answer, build
from tests.oracle.java_driver import java_oracle

BSI = BsiIndexType()
COMPARISONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _build(type_text: str, values: list[Any], chunks: int = 1) -> bytes:
    return build(BSI, type_text, values, None, chunks)


_answer = answer


def _model(values: list[Any], op: str, literal: Any = None) -> list[int]:
    """Java's answers from the values: every predicate but is-null keeps only non-null rows."""
    present = [(i, v) for i, v in enumerate(values) if v is not None]
    if op == "equal":
        return [i for i, v in present if v == literal]
    if op == "not_equal":
        return [i for i, v in present if v != literal]
    if op == "in":
        return [i for i, v in present if v in literal]
    if op == "not_in":
        return [i for i, v in present if v not in literal]
    if op == "is_null":
        return [i for i, v in enumerate(values) if v is None]
    if op == "is_not_null":
        return [i for i, _ in present]
    return [i for i, v in present if COMPARISONS[op](v, literal)]


QUERY_OPS = ("equal", "not_equal", "<", "<=", ">", ">=")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.none() | st.integers(-(2**40), 2**40) | st.integers(-50, 50), max_size=300),
    st.lists(st.integers(-(2**40), 2**40) | st.integers(-52, 52), min_size=1, max_size=4),
    st.integers(1, 3),
)
def test_bigint_answers_match_the_model(values: list[int | None], probes: list[int], chunks: int) -> None:
    reader = BSI.reader(parse_type("BIGINT"), {}, _build("BIGINT", values, chunks))
    for literal in probes + [v for v in values[:3] if v is not None]:
        for op in QUERY_OPS:
            assert _answer(reader, op, literal) == _model(values, op, literal), (op, literal)
    assert _answer(reader, "in", probes) == _model(values, "in", probes)
    assert _answer(reader, "not_in", probes) == _model(values, "not_in", probes)
    assert _answer(reader, "is_null") == _model(values, "is_null")
    assert _answer(reader, "is_not_null") == _model(values, "is_not_null")


@settings(max_examples=30, deadline=None)
@given(st.lists(st.none() | st.integers(-(10**8), 10**8), max_size=100), st.integers(-(10**8), 10**8))
def test_decimal_answers_match_the_model(unscaled: list[int | None], probe: int) -> None:
    values = [None if u is None else decimal.Decimal(u).scaleb(-2) for u in unscaled]
    reader = BSI.reader(parse_type("DECIMAL(12, 2)"), {}, _build("DECIMAL(12, 2)", values))
    literal = decimal.Decimal(probe).scaleb(-2)
    for op in QUERY_OPS:
        assert _answer(reader, op, literal) == _model(values, op, literal), op
    # a literal between two representable values: no row equals it, ranges round the right way
    between = literal + decimal.Decimal("0.005")
    for op in QUERY_OPS:
        assert _answer(reader, op, between) == _model(values, op, between), op


def test_long_extremes_and_empty_sides() -> None:
    values = [2**63 - 1, None, -(2**63) + 1, 0]
    reader = BSI.reader(parse_type("BIGINT"), {}, _build("BIGINT", values))
    for literal in (-(2**63), -(2**63) + 1, -1, 0, 2**63 - 1):
        for op in QUERY_OPS:
            assert _answer(reader, op, literal) == _model(values, op, literal), (op, literal)
    for values in ([], [None], [5, 6], [-5, -6], [0, 0]):
        reader = BSI.reader(parse_type("INT"), {}, _build("INT", values))
        for op in QUERY_OPS:
            assert _answer(reader, op, 5) == _model(values, op, 5), (values, op)
    with pytest.raises(ValueError, match="cannot hold"):
        _build("BIGINT", [-(2**63)])


def test_timestamps_dates_and_times() -> None:
    base = datetime.datetime(2024, 5, 1, 10, 0, 0)
    stamps = [base, None, base + datetime.timedelta(milliseconds=1), datetime.datetime(1960, 1, 1)]
    reader = BSI.reader(parse_type("TIMESTAMP(3)"), {}, _build("TIMESTAMP(3)", stamps))
    assert _answer(reader, ">", base) == [2]
    assert _answer(reader, "<", base) == [3]
    # between two milliseconds: > and >= agree, < and <= agree
    half = base + datetime.timedelta(microseconds=500)
    assert _answer(reader, ">=", half) == _answer(reader, ">", half) == [2]
    assert _answer(reader, "<", half) == _answer(reader, "<=", half) == [0, 3]
    assert _answer(reader, "equal", half) == []
    days = [datetime.date(2000, 1, 1), datetime.date(1950, 6, 1), None]
    reader = BSI.reader(parse_type("DATE"), {}, _build("DATE", days))
    assert _answer(reader, "<", datetime.date(1970, 1, 1)) == [1]
    times = [datetime.time(1, 2, 3), datetime.time(0, 0), None]
    reader = BSI.reader(parse_type("TIME"), {}, _build("TIME", times))
    assert _answer(reader, ">=", datetime.time(1, 0)) == [0]


GOLDEN_BIGINT = (
    "01000000060101000000000000000000000000000003e83a3000000100000000000200100000000000030004000000000a3a3000000100000000000000"
    "1000000000003a300000000000003a30000001000000000000001000000000003a30000001000000000000001000000004003a300000000000003a30"
    "000001000000000000001000000004003a30000001000000000000001000000004003a30000001000000000000001000000004003a300000010000000000"
    "00001000000004003a30000001000000000000001000000004000101000000000000000000000000000000033a30000001000000000001001000000001"
    "000500000000023a300000010000000000010010000000010005003a30000001000000000001001000000001000500"
)


def test_bytes_equal_checked_in_java_bytes() -> None:
    # BitSliceIndexBitmapFileIndex (Paimon 2.0.0) over [5, -3, null, 0, 1000, -3]
    values = [5, -3, None, 0, 1000, -3]
    assert _build("BIGINT", values).hex() == GOLDEN_BIGINT
    reader = BSI.reader(parse_type("BIGINT"), {}, bytes.fromhex(GOLDEN_BIGINT))
    for literal in (-3, 0, 5, 6):
        for op in QUERY_OPS:
            assert _answer(reader, op, literal) == _model(values, op, literal)


def _oracle_cases() -> list[tuple[str, list[Any], list[Any], Any]]:
    """(type, values for Java, literals, converter of a Java JSON value to lakestore's)."""
    rng = np.random.default_rng(5)
    ints = [None if x % 7 == 0 else int(x) for x in rng.integers(-1000, 1000, 2000)]
    micros = [int(x) * 1000 for x in rng.integers(-(10**6), 10**6, 300)]

    def stamp(m: Any) -> Any:
        return None if m is None else datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=m)

    def day(d: Any) -> Any:
        return None if d is None else datetime.date(1970, 1, 1) + datetime.timedelta(days=d)

    def dec(text: Any) -> Any:
        return None if text is None else decimal.Decimal(text)

    return [
        ("INT", ints, [-1001, -1000, -5, 0, 3, 999, 1000], lambda v: v),
        ("BIGINT", [int(x) for x in rng.integers(-(2**50), 2**50, 500)] + [None], [0, 2**49, -(2**49)], lambda v: v),
        ("BIGINT", [int(x) for x in rng.integers(0, 2**20, 500)], [5, 2**19], lambda v: v),  # one side only
        ("TINYINT", [int(x) for x in rng.integers(-128, 128, 300)], [-128, 0, 127], lambda v: v),
        ("SMALLINT", [None, -1, -32768, 32767, 0], [-32768, 0], lambda v: v),
        ("DATE", [int(x) for x in rng.integers(-3000, 30000, 300)], [0, 10000], day),
        ("TIMESTAMP(3)", micros, [micros[0], 0], stamp),
        ("TIMESTAMP(6)", micros, [micros[1], 0], stamp),
        ("DECIMAL(10, 2)", ["1.50", "-2.25", None, "100.00", "0.00", "-99999999.99"], ["1.50", "0.00", "-2.25"], dec),
    ]


@pytest.mark.oracle
def test_bytes_and_answers_equal_java() -> None:
    java = java_oracle()
    for type_text, values, literals, convert in _oracle_cases():
        queries = [{"op": op, "literal": lit} for lit in literals for op in QUERY_OPS]
        queries += [
            {"op": "in", "literals": literals[:2]},
            {"op": "not_in", "literals": literals[:2]},
            {"op": "is_null"},
            {"op": "is_not_null"},
        ]
        java_bytes, java_answers = java.file_index("bsi", type_text, values, queries=queries)
        assert _build(type_text, [convert(v) for v in values], chunks=2) == java_bytes, type_text
        reader = BSI.reader(parse_type(type_text), {}, java_bytes)
        for query, java_answer in zip(queries, java_answers, strict=True):
            if "literals" in query:
                literal: Any = [convert(v) for v in query["literals"]]
            else:
                literal = convert(query.get("literal"))
            assert _answer(reader, query["op"], literal) == java_answer, (type_text, query)


def test_unsupported_types_and_invalid_bytes() -> None:
    for text in ("FLOAT", "DOUBLE", "STRING", "BOOLEAN"):
        assert not BSI.supports(parse_type(text))
    with pytest.raises(UnsupportedTypeError):
        BSI.writer(parse_type("STRING"), {})
    with pytest.raises(ValueError, match="long"):
        _build("DECIMAL(38, 0)", [decimal.Decimal(2**70)])
    data = _build("INT", [1, -2, None])
    with pytest.raises(CorruptMetadataError):
        BSI.reader(parse_type("INT"), {}, data[:-2])
    with pytest.raises(CorruptMetadataError):
        BSI.reader(parse_type("INT"), {}, b"\x01")
    with pytest.raises(UnsupportedTableError, match="version 2"):
        BSI.reader(parse_type("INT"), {}, b"\x02" + data[1:])
    with pytest.raises(ValueError, match="comparison"):
        BSI.reader(parse_type("INT"), {}, data).compare("!=", 1)


def test_tables_skip_files_by_bitmap_and_bsi_indexes(tmp_path: Path) -> None:
    """Values interleaved over four files: statistics keep every file for a middle value, the
    bitmap (strings) and bsi (numbers) indexes keep only the file holding it."""
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    options = {"file-index.bitmap.columns": "s", "file-index.bsi.columns": "id", "file-index.in-manifest-threshold": "1 b"}
    table = catalog.create_table("db.t", schema=schema, options=options)
    for k in range(4):
        ids = list(range(k, 400, 8)) + [None]
        table.write_arrow(pa.table({"id": ids, "s": [None if i is None else f"v{i:03d}" for i in ids]}, schema=schema))
    assert all(f.extra_files == (f.file_name + ".index",) for s in table.scan().plan() for f in s.files)
    for predicate, skipped, rows in [
        (col("s") == "v201", 3, [201]),
        (col("s") == "v204", 4, []),  # within every file's bounds, in none
        (col("s").isin(["v201", "v202"]), 2, [201, 202]),
        (col("id") == 203, 3, [203]),
        (col("id") == 204, 4, []),
        (col("id").isin([200, 203]), 2, [200, 203]),
        (col("id") != 203, 0, None),
    ]:
        assert table.scan().filter(predicate).plan().files_skipped_by_index == skipped, predicate
        if rows is not None:
            got = sorted(r["id"] for r in table.scan().filter(predicate).to_arrow().to_pylist())
            assert got == rows, predicate
