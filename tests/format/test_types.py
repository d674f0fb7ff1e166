"""Paimon type strings <-> DataType <-> Arrow."""

from __future__ import annotations

import pyarrow as pa
import pytest

from lakestore.errors import UnsupportedTypeError
from lakestore.format.types import from_arrow, parse_type

# (Paimon type string as written, Arrow type, canonical string lakestore writes)
MAPPING = [
    ("BOOLEAN", pa.bool_(), "BOOLEAN"),
    ("TINYINT", pa.int8(), "TINYINT"),
    ("SMALLINT", pa.int16(), "SMALLINT"),
    ("INT", pa.int32(), "INT"),
    ("BIGINT", pa.int64(), "BIGINT"),
    ("FLOAT", pa.float32(), "FLOAT"),
    ("DOUBLE", pa.float64(), "DOUBLE"),
    ("DECIMAL(10, 2)", pa.decimal128(10, 2), "DECIMAL(10, 2)"),
    ("DECIMAL(38, 10)", pa.decimal128(38, 10), "DECIMAL(38, 10)"),
    ("STRING", pa.string(), "STRING"),
    ("BYTES", pa.binary(), "BYTES"),
    ("DATE", pa.date32(), "DATE"),
    ("TIMESTAMP(3)", pa.timestamp("ms"), "TIMESTAMP(3)"),
    ("TIMESTAMP(6)", pa.timestamp("us"), "TIMESTAMP(6)"),
    ("TIMESTAMP(6) WITH LOCAL TIME ZONE", pa.timestamp("us", tz="UTC"), "TIMESTAMP(6) WITH LOCAL TIME ZONE"),
]


@pytest.mark.parametrize("text,arrow,canonical", MAPPING, ids=[m[0] for m in MAPPING])
def test_type_mapping(text, arrow, canonical):
    t = parse_type(text)
    assert t.nullable
    assert t.to_arrow() == arrow
    assert t.to_paimon() == canonical
    assert from_arrow(arrow) == t
    assert parse_type(t.to_paimon()) == t
    nn = parse_type(text + " NOT NULL")
    assert not nn.nullable and nn.to_paimon() == canonical + " NOT NULL"
    assert from_arrow(arrow, nullable=False) == nn


@pytest.mark.parametrize(
    "text,expected",
    [
        ("TIMESTAMP_LTZ(6)", "TIMESTAMP(6) WITH LOCAL TIME ZONE"),  # pypaimon's spelling
        ("TIMESTAMP_LTZ(3) NOT NULL", "TIMESTAMP(3) WITH LOCAL TIME ZONE NOT NULL"),
        ("VARCHAR(2147483647)", "STRING"),
        ("VARBINARY(2147483647)", "BYTES"),
        ("VARCHAR(10)", "VARCHAR(10)"),
        ("CHAR(3)", "CHAR(3)"),
        ("INTEGER", "INT"),
        ("decimal(38,10)", "DECIMAL(38, 10)"),
        ("TIMESTAMP", "TIMESTAMP(6)"),
        ("DECIMAL", "DECIMAL(10, 0)"),
    ],
)
def test_other_spellings(text, expected):
    assert parse_type(text).to_paimon() == expected


def test_wide_and_compact_classification():
    assert parse_type("DECIMAL(18, 2)").is_compact_decimal
    assert not parse_type("DECIMAL(19, 2)").is_compact_decimal
    assert parse_type("TIMESTAMP(3)").is_compact_timestamp
    assert not parse_type("TIMESTAMP(6)").is_compact_timestamp
    assert not parse_type("TIMESTAMP_LTZ(6)").is_compact_timestamp


@pytest.mark.parametrize("text", ["ARRAY<INT>", "MAP<STRING, INT>", "ROW<a INT>", "DECIMAL(39, 2)", "DECIMAL(5, 6)", "FOO", ""])
def test_unsupported_type_strings(text):
    with pytest.raises(UnsupportedTypeError):
        parse_type(text)


@pytest.mark.parametrize(
    "arrow", [pa.list_(pa.uint32()), pa.struct([("a", pa.float16())]), pa.uint32(), pa.float16(), pa.decimal256(40, 2), pa.null()]
)
def test_unsupported_arrow_types(arrow):
    with pytest.raises(UnsupportedTypeError):
        from_arrow(arrow)


def test_non_string_type_is_typed_error():
    with pytest.raises(UnsupportedTypeError):
        parse_type(123)  # type: ignore[arg-type]
