"""BinaryRow bytes pinned against pypaimon (tests/fixtures/oracle_facts.json), and round trips."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lakestore.errors import CorruptMetadataError
from lakestore.format.binary_row import EMPTY_ROW, decode_row, encode_rows, encode_values, header_size
from lakestore.format.types import parse_type
from tests._support import fact_value, facts

ROWS = facts()["binary_rows"]

# A null wide DECIMAL (p > 18) or TIMESTAMP(p > 3) is where pypaimon and Java part ways. Java's
# BinaryWriter.createNullSetter writes such nulls through writeDecimal(pos, null) /
# writeTimestamp(pos, null), which reserve 16 / 8 zeroed bytes in the variable part and point the
# slot at them (offset << 32, size 0); pypaimon's GenericRowSerializer reserves nothing. lakestore
# follows Java (the format's reference). Both layouts decode to null in every reader; only the
# bucket of a *nullable* bucket-key value could differ, and only for append tables (keys of
# primary-key tables are NOT NULL). For these cases we pin Java's bytes.
JAVA_NULL_LAYOUT = {
    "DECIMAL(38, 10)": "0000000100010000000000000000000010000000" + "00" * 16,
    "TIMESTAMP(6)": "0000000100010000000000000000000010000000" + "00" * 8,
    "TIMESTAMP(6) WITH LOCAL TIME ZONE": "0000000100010000000000000000000010000000" + "00" * 8,
}


def expected_hex(case: dict) -> str:
    if len(case["types"]) == 1 and case["values"] == [None] and case["types"][0] in JAVA_NULL_LAYOUT:
        return JAVA_NULL_LAYOUT[case["types"][0]]
    return case["hex"]


def _id(case: dict) -> str:
    vals = [str(v)[:20] for v in case["values"]]
    return f"{'/'.join(case['types']) or 'empty'}={','.join(vals)}"


def test_facts_cover_every_primitive_type_and_nulls():
    singles = {c["types"][0] for c in ROWS if len(c["types"]) == 1}
    for t in (
        "BOOLEAN",
        "TINYINT",
        "SMALLINT",
        "INT",
        "BIGINT",
        "FLOAT",
        "DOUBLE",
        "DECIMAL(10, 2)",
        "DECIMAL(38, 10)",
        "STRING",
        "BYTES",
        "DATE",
        "TIMESTAMP(3)",
        "TIMESTAMP(6)",
        "TIMESTAMP(6) WITH LOCAL TIME ZONE",
    ):
        assert t in singles
        assert any(c["types"] == [t] and c["values"] == [None] for c in ROWS), t
    assert any(len(c["types"]) > 56 for c in ROWS)  # 16-byte null bitset


@pytest.mark.parametrize("case", ROWS, ids=[_id(c) for c in ROWS])
def test_encode_matches_pypaimon(case):
    types = [parse_type(t) for t in case["types"]]
    values = [fact_value(v) for v in case["values"]]
    assert encode_values(types, values).hex() == expected_hex(case)


@pytest.mark.parametrize("case", ROWS, ids=[_id(c) for c in ROWS])
def test_decode_pypaimon_bytes(case):
    types = [parse_type(t) for t in case["types"]]
    values = tuple(fact_value(v) for v in case["values"])
    got = decode_row(bytes.fromhex(case["hex"]), types)
    assert got == values


def test_vectorised_encoding_equals_row_by_row():
    """All single-type facts of one type encoded as one column: each row equals pypaimon's bytes
    (exercises variable-part offsets with rows of different widths in one batch)."""
    by_type: dict[str, list[dict]] = {}
    for c in ROWS:
        if len(c["types"]) == 1:
            by_type.setdefault(c["types"][0], []).append(c)
    for t, cases in by_type.items():
        dtype = parse_type(t)
        arr = pa.array([fact_value(c["values"][0]) for c in cases], type=dtype.to_arrow())
        rows = encode_rows([dtype], [arr])
        assert [rows.row(i).hex() for i in range(len(cases))] == [expected_hex(c) for c in cases], t


def test_multi_field_rows_batched():
    # (STRING, BIGINT, STRING) with long and short strings and nulls in one batch
    types = [parse_type("STRING"), parse_type("BIGINT"), parse_type("STRING")]
    a = pa.array(["x" * 30, None, "short", ""])
    b = pa.array([1, 2, None, -5], pa.int64())
    c = pa.array(["abcdefgh", "日本語テキスト", None, "z" * 9])
    rows = encode_rows(types, [a, b, c])
    for i in range(4):
        single = encode_values(types, [a[i].as_py(), b[i].as_py(), c[i].as_py()])
        assert rows.row(i) == single
        assert decode_row(rows.row(i), types) == (a[i].as_py(), b[i].as_py(), c[i].as_py())


@pytest.mark.parametrize("type_text", sorted(JAVA_NULL_LAYOUT))
def test_java_null_layout_still_decodes_pypaimon_bytes(type_text):
    case = next(c for c in ROWS if c["types"] == [type_text] and c["values"] == [None])
    assert case["hex"] != JAVA_NULL_LAYOUT[type_text]  # the documented divergence is real
    assert decode_row(bytes.fromhex(case["hex"]), [parse_type(type_text)]) == (None,)
    assert decode_row(bytes.fromhex(JAVA_NULL_LAYOUT[type_text]), [parse_type(type_text)]) == (None,)


def test_empty_row_constant():
    assert EMPTY_ROW.hex() == "000000000000000000000000"
    assert encode_values([], []) == EMPTY_ROW


def test_header_size():
    assert header_size(0) == 8
    assert header_size(56) == 8
    assert header_size(57) == 16
    assert header_size(70) == 16


@pytest.mark.parametrize("payload", [b"", b"\x00\x00\x00\x02" + bytes(8), bytes.fromhex("00000001") + bytes(4)])
def test_decode_garbage_is_typed_error(payload):
    with pytest.raises(CorruptMetadataError):
        decode_row(payload, [parse_type("BIGINT"), parse_type("STRING")])


def test_decode_var_part_out_of_bounds():
    good = encode_values([parse_type("STRING")], ["a long string value"])
    with pytest.raises(CorruptMetadataError):
        decode_row(good[:-8], [parse_type("STRING")])


# ---------------------------------------------------------------------------------------------
# property: decode(encode(values)) == values for random rows of random primitive types

_EPOCH = dt.datetime(1970, 1, 1)
_TS_MIN, _TS_MAX = dt.datetime(1900, 1, 1), dt.datetime(2200, 1, 1)


def _strategy(type_text: str):
    t = parse_type(type_text)
    root = t.root
    if root == "BOOLEAN":
        s = st.booleans()
    elif root == "TINYINT":
        s = st.integers(-(2**7), 2**7 - 1)
    elif root == "SMALLINT":
        s = st.integers(-(2**15), 2**15 - 1)
    elif root == "INT":
        s = st.integers(-(2**31), 2**31 - 1)
    elif root == "BIGINT":
        s = st.integers(-(2**63), 2**63 - 1)
    elif root == "FLOAT":
        s = st.floats(width=32, allow_nan=False)
    elif root == "DOUBLE":
        s = st.floats(allow_nan=False)
    elif root == "DECIMAL":
        p, sc = t.precision, t.scale
        s = st.integers(-(10**p) + 1, 10**p - 1).map(lambda u, sc=sc: decimal.Decimal(u).scaleb(-sc, decimal.Context(prec=60)))
    elif t.is_string:
        s = st.text(max_size=40)
    elif t.is_binary:
        s = st.binary(max_size=40)
    elif root == "DATE":
        s = st.dates(dt.date(1800, 1, 1), dt.date(2300, 1, 1))
    elif root == "TIMESTAMP":
        s = st.datetimes(_TS_MIN, _TS_MAX)
        if t.precision == 3:
            s = s.map(lambda v: v.replace(microsecond=v.microsecond // 1000 * 1000))
    else:  # TIMESTAMP_LTZ
        s = st.datetimes(_TS_MIN, _TS_MAX).map(lambda v: v.replace(tzinfo=dt.UTC))
    return st.tuples(st.just(type_text), st.none() | s)


_TYPES = [
    "BOOLEAN",
    "TINYINT",
    "SMALLINT",
    "INT",
    "BIGINT",
    "FLOAT",
    "DOUBLE",
    "DECIMAL(10, 2)",
    "DECIMAL(18, 4)",
    "DECIMAL(19, 0)",
    "DECIMAL(38, 10)",
    "STRING",
    "BYTES",
    "DATE",
    "TIMESTAMP(3)",
    "TIMESTAMP(6)",
    "TIMESTAMP(6) WITH LOCAL TIME ZONE",
]
_FIELD = st.sampled_from(_TYPES).flatmap(_strategy)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_FIELD, min_size=0, max_size=12))
def test_round_trip(fields):
    types = [parse_type(t) for t, _ in fields]
    values = tuple(v for _, v in fields)
    encoded = encode_values(types, values)
    assert decode_row(encoded, types) == values


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.none() | st.text(max_size=20),
            st.none() | st.decimals(min_value=-(10**27), max_value=10**27, places=10, allow_nan=False, allow_infinity=False),
            st.none() | st.integers(-(2**63), 2**63 - 1),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_batch_equals_single_rows(rows):
    types = [parse_type("STRING"), parse_type("DECIMAL(38, 10)"), parse_type("BIGINT")]
    arrays = [pa.array([r[i] for r in rows], type=t.to_arrow()) for i, t in enumerate(types)]
    batch = encode_rows(types, arrays)
    for i, r in enumerate(rows):
        assert batch.row(i) == encode_values(types, list(r))
        assert decode_row(batch.row(i), types) == tuple(r)
