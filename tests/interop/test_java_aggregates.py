"""Aggregate functions of the aggregation merge engine against Paimon Java 2.0.0: the same commits
give the same rows whichever engine wrote and whichever reads (nulls, blanks, decimals, dates,
merges across several sorted runs and after full compactions)."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pyarrow as pa
import pytest

from tests.interop.conftest import same_rows

pytestmark = pytest.mark.oracle

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("i", pa.int32()),
        ("d", pa.float64()),
        ("s", pa.string()),
        ("dec", pa.decimal128(10, 2)),
        ("b", pa.bool_()),
        ("dt", pa.date32()),
    ]
)
D, day = Decimal, datetime.date
COMMITS = [
    [
        (1, 2, 1.5, "b", D("1.10"), True, day(2024, 1, 2)),
        (2, None, None, None, None, None, None),
        (3, 5, 2.0, "x", D("3.00"), False, day(2020, 1, 1)),
    ],
    [
        (1, 3, None, "a,b", D("2.05"), False, None),
        (2, 4, 2.5, "", None, True, day(2021, 5, 5)),
        (4, 0, 0.0, "", D("0.00"), True, day(1970, 1, 1)),
    ],
    [
        (1, None, 4.0, " ", D("-1.00"), None, day(2025, 1, 1)),
        (3, -2, None, "y,x", D("1.00"), True, None),
        (4, None, None, "\u3000", None, None, None),
    ],
    [(2, 7, 1.0, "d", D("5.55"), False, day(2019, 1, 1)), (4, None, None, None, None, None, None), (1, 1, 0.5, "c", D("0.01"), True, None)],
]
# which columns each function aggregates (the others keep their last value)
FUNCTIONS = {
    "sum": "i d dec",
    "product": "i d dec",
    "min": "i d s dec dt",
    "max": "i d s dec dt",
    "last_value": "i d s dec b dt",
    "last_non_null_value": "i d s dec b dt",
    "first_value": "i d s dec b dt",
    "first_non_null_value": "i d s dec b dt",
    "listagg": "s",
    "listagg-distinct": "s",
    "bool_and": "b",
    "bool_or": "b",
}


def options(function: str) -> dict[str, str]:
    opts = {"bucket": "1", "merge-engine": "aggregation"}
    columns = FUNCTIONS[function].split()
    for name in SCHEMA.names[1:]:
        opts[f"fields.{name}.aggregate-function"] = function.split("-")[0] if name in columns else "last_value"
    if function.endswith("-distinct"):
        opts["fields.s.distinct"] = "true"
    return opts


def batch(index: int) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(SCHEMA.names, row, strict=True)) for row in COMMITS[index]], schema=SCHEMA)


@pytest.mark.parametrize("function", list(FUNCTIONS))
def test_aggregate_functions_agree_with_java(java, catalog, warehouse, function):
    java.create_table(warehouse, "db.ref", SCHEMA, primary_keys=["id"], options=options(function))
    ours = catalog.create_table("db.ours", schema=SCHEMA, primary_keys=["id"], options=options(function))
    for index in range(len(COMMITS)):
        java.write(warehouse, "db.ref", batch(index))
        ours.write_arrow(batch(index))
    expected = java.read(warehouse, "db.ref")
    same_rows(catalog.get_table("db.ref").to_arrow(), expected, ["id"])
    same_rows(catalog.get_table("db.ours").to_arrow(), expected, ["id"])
    same_rows(java.read(warehouse, "db.ours"), expected, ["id"])
    catalog.get_table("db.ours").compact(full=True)
    java.compact(warehouse, "db.ref")
    same_rows(java.read(warehouse, "db.ours"), expected, ["id"])
    same_rows(catalog.get_table("db.ref").to_arrow(), expected, ["id"])
