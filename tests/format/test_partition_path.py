"""Partition directories and partition BinaryRows pinned against real pypaimon/Rust writes."""

from __future__ import annotations

import datetime as dt

import pytest

from lakestore.errors import PartitionValueError
from lakestore.format.binary_row import decode_row, encode_values
from lakestore.format.partition_path import DEFAULT_PARTITION_NAME, bucket_dir, escape_path_name, partition_path, partition_value_string
from lakestore.format.types import from_arrow, parse_type
from tests._support import fact_value, facts

_ARROW_TYPES = {"string": "STRING", "int32": "INT", "date32[day]": "DATE"}
CASES = [c for c in facts()["partition_paths"] if "rows" in c]
ROWS = [(c["route"], c["name"], _ARROW_TYPES[c["type"]], r) for c in CASES for r in c["rows"]]


def test_facts_cover_string_int_date_on_both_routes():
    assert {(c["route"], c["name"]) for c in CASES} == {(r, n) for r in ("python", "rust") for n in ("string", "int", "date")}
    values = {fact_value(r["value"]) for c in CASES if c["name"] == "string" for r in c["rows"]}
    for v in ("with space", "a/b", "c:d", "k=v", "50%", "日本", "", None):
        assert v in values


@pytest.mark.parametrize("route,name,type_text,row", ROWS, ids=[f"{a}-{b}-{r['path']}" for a, b, _, r in ROWS])
def test_partition_path_and_binary_row(route, name, type_text, row):
    t = parse_type(type_text)
    value = fact_value(row["value"])
    assert partition_path(["p"], [t], [value]) == row["path"]
    assert encode_values([t], [value]).hex() == row["partition_binary_row"]
    assert decode_row(bytes.fromhex(row["partition_binary_row"]), [t]) == (value,)


def test_empty_string_and_null_share_a_directory_but_not_a_binary_row():
    t = parse_type("STRING")
    assert partition_path(["p"], [t], [""]) == partition_path(["p"], [t], [None]) == f"p={DEFAULT_PARTITION_NAME}"
    assert encode_values([t], [""]) != encode_values([t], [None])


def test_multi_level_and_custom_default():
    types = [parse_type("STRING"), parse_type("INT"), parse_type("DATE")]
    assert partition_path(["dt", "h", "d"], types, ["2024-01-01", 7, dt.date(2024, 1, 1)]) == "dt=2024-01-01/h=7/d=19723"
    assert partition_path(["dt", "h"], types[:2], [None, None], default_name="NULLP") == "dt=NULLP/h=NULLP"
    assert partition_path([], [], []) == ""


def test_key_name_is_escaped_too():
    assert partition_path(["a:b"], [parse_type("INT")], [1]) == "a%3Ab=1"


def test_escape_rules():
    assert escape_path_name("plain") == "plain"
    assert escape_path_name("a b<>|+,;@~$&") == "a b<>|+,;@~$&"
    assert escape_path_name("#%/:=?*'\"\\{}[]^\t") == "%23%25%2F%3A%3D%3F%2A%27%22%5C%7B%7D%5B%5D%5E%09"
    assert escape_path_name("héllo") == "héllo"


def test_value_strings():
    assert partition_value_string(True, parse_type("BOOLEAN")) == "true"
    assert partition_value_string(-5, parse_type("BIGINT")) == "-5"
    assert partition_value_string(dt.date(1969, 12, 31), parse_type("DATE")) == "-1"
    with pytest.raises(PartitionValueError):
        partition_value_string(1.5, parse_type("DOUBLE"))
    with pytest.raises(PartitionValueError):
        partition_value_string("2024-01-01", parse_type("DATE"))


def test_bucket_dir():
    assert bucket_dir("/t", "", 3) == "/t/bucket-3"
    assert bucket_dir("/t", "dt=x", 0) == "/t/dt=x/bucket-0"
    assert from_arrow is not None
