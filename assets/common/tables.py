"""The lakestore tables of the pipeline: schemas, keys and options, created on first use.

``orders`` and ``lineitem`` (declared in YAML, see ``DECLARATIONS``) are primary-key tables partitioned by order date (``dt``) with fixed
buckets and ``write-only=true`` writers (compaction is a dedicated stage). Their landing rows carry
a row kind (``_op``: +I/+U/-D) and the landing day (``_seq``) as sequence field, so the newest
change of a key wins even when days are ingested out of order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow as pa

import lakestore

DATABASE = "tpch"
PRICE = pa.decimal128(15, 2)


def _key(name: str, type_: pa.DataType) -> pa.Field:
    return pa.field(name, type_, nullable=False)


ORDERS_SCHEMA = pa.schema(
    [
        _key("o_orderkey", pa.int64()),
        pa.field("o_custkey", pa.int64()),
        pa.field("o_orderstatus", pa.string()),
        pa.field("o_totalprice", PRICE),
        pa.field("o_orderdate", pa.date32()),
        pa.field("o_orderpriority", pa.string()),
        pa.field("o_clerk", pa.string()),
        pa.field("o_shippriority", pa.int32()),
        pa.field("o_comment", pa.string()),
        _key("dt", pa.string()),
        _key("_op", pa.string()),
        _key("_seq", pa.int64()),
    ]
)

LINEITEM_FLAGS = pa.struct([pa.field("returnflag", pa.string()), pa.field("linestatus", pa.string())])

LINEITEM_SCHEMA = pa.schema(
    [
        _key("l_orderkey", pa.int64()),
        pa.field("l_partkey", pa.int64()),
        pa.field("l_suppkey", pa.int64()),
        _key("l_linenumber", pa.int64()),
        pa.field("l_quantity", PRICE),
        pa.field("l_extendedprice", PRICE),
        pa.field("l_discount", PRICE),
        pa.field("l_tax", PRICE),
        # TPC-H's two flag columns as one nested ROW column (Paimon's nested types)
        pa.field("l_flags", LINEITEM_FLAGS),
        pa.field("l_shipdate", pa.date32()),
        pa.field("l_commitdate", pa.date32()),
        pa.field("l_receiptdate", pa.date32()),
        pa.field("l_shipinstruct", pa.string()),
        pa.field("l_shipmode", pa.string()),
        pa.field("l_comment", pa.string()),
        _key("dt", pa.string()),
        _key("_op", pa.string()),
        _key("_seq", pa.int64()),
    ]
)

CUSTOMER_SCHEMA = pa.schema(
    [
        _key("c_custkey", pa.int64()),
        pa.field("c_name", pa.string()),
        pa.field("c_address", pa.string()),
        pa.field("c_nationkey", pa.int32()),
        pa.field("c_phone", pa.string()),
        pa.field("c_acctbal", PRICE),
        pa.field("c_mktsegment", pa.string()),
        pa.field("c_comment", pa.string()),
    ]
)

NATION_SCHEMA = pa.schema(
    [
        _key("n_nationkey", pa.int32()),
        pa.field("n_name", pa.string()),
        pa.field("n_regionkey", pa.int32()),
        pa.field("n_comment", pa.string()),
    ]
)

REVENUE_SCHEMA = pa.schema(
    [
        _key("dt", pa.string()),
        _key("n_nationkey", pa.int32()),
        pa.field("n_name", pa.string()),
        pa.field("revenue", pa.decimal128(18, 2)),
        pa.field("order_count", pa.int64()),
    ]
)

ORDER_STATUS_SCHEMA = pa.schema(
    [
        _key("dt", pa.string()),
        _key("o_orderkey", pa.int64()),
        pa.field("o_orderstatus", pa.string()),
        pa.field("o_totalprice", PRICE),
        pa.field("line_count", pa.int64()),
        pa.field("last_shipdate", pa.date32()),
    ]
)


@dataclass(frozen=True)
class TableSpec:
    name: str
    schema: pa.Schema
    primary_keys: tuple[str, ...]
    partition_keys: tuple[str, ...] = ()
    options: Mapping[str, str] = field(default_factory=dict)
    lifecycle: bool = False  # a main table: bucket count and retention come from the catalog resource
    database: str = DATABASE

    @property
    def identifier(self) -> str:
        return f"{self.database}.{self.name}"

    @property
    def day_column(self) -> str:
        """The partition column holding the day (``YYYY-MM-DD``) the lifecycle stages work on."""
        return self.partition_keys[0] if self.partition_keys else "dt"


# Every table of the pipeline publishes Iceberg-compatible metadata next to its data
# (<table>/metadata, as Paimon 2.0 writes it), so DuckDB, Polars and pyiceberg read it. Iceberg
# readers see only the last LSM level of a primary-key table: the main tables publish what the
# compaction stage writes (ingestion adds level-0 files only), the dimensions and marts, written
# by small commits without a compaction stage, compact fully on every commit so that each commit
# is visible to Iceberg readers at once.
ICEBERG = {"metadata.iceberg.storage": "table-location"}
_PUBLISHED_ON_COMMIT = {**ICEBERG, "full-compaction.delta-commits": "1"}
# customer uses Paimon's default for primary-key tables, dynamic buckets: a bucket fills up to
# the target number of keys, then the next starts (SF1's 150k customers spread over 3 buckets).
CUSTOMER = TableSpec(
    "customer", CUSTOMER_SCHEMA, ("c_custkey",), options={"dynamic-bucket.target-row-num": "50000", **_PUBLISHED_ON_COMMIT}
)
NATION = TableSpec("nation", NATION_SCHEMA, ("n_nationkey",), options={"bucket": "1", **_PUBLISHED_ON_COMMIT})
DAILY_NATION_REVENUE = TableSpec(
    "mart_daily_nation_revenue",
    REVENUE_SCHEMA,
    ("dt", "n_nationkey"),
    ("dt",),
    {
        "bucket": "1",
        "merge-engine": "aggregation",
        "fields.revenue.aggregate-function": "sum",
        "fields.order_count.aggregate-function": "sum",
        **_PUBLISHED_ON_COMMIT,
    },
)
ORDER_STATUS = TableSpec(
    "mart_order_status",
    ORDER_STATUS_SCHEMA,
    ("dt", "o_orderkey"),
    ("dt",),
    {"bucket": "1", "merge-engine": "partial-update", **_PUBLISHED_ON_COMMIT},
)

# The main tables (orders, lineitem) are declared in YAML with their lifecycle, as a project's own
# tables are (pipelines/defs/tpch/<table>/defs.yaml, loaded by Dagster as PaimonTableComponents):
# ORDERS, LINEITEM and MAIN_TABLES are read from there on first use.
DECLARATIONS = Path(__file__).resolve().parents[2] / "pipelines" / "defs" / "tpch"
_MAIN = {"ORDERS": "orders", "LINEITEM": "lineitem"}


@cache
def declared_spec(name: str) -> TableSpec:
    """The ``TableSpec`` of a main table, from its ``defs.yaml``."""
    from assets.common.declared import read_declaration  # noqa: PLC0415 - it imports this module

    return read_declaration(DECLARATIONS / name / "defs.yaml").spec()


def __getattr__(name: str) -> Any:
    if name in _MAIN:
        return declared_spec(_MAIN[name])
    if name == "MAIN_TABLES":
        return tuple(declared_spec(table) for table in _MAIN.values())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def ensure_table(catalog: lakestore.Catalog, spec: TableSpec, lifecycle_options: Mapping[str, str] | None = None) -> lakestore.Table:
    """Get the table, creating it (and the database) on first use. Raises OptionError if this
    lakestore build does not implement an option the spec needs."""
    catalog.create_database(spec.database, exist_ok=True)
    if catalog.table_exists(spec.identifier):
        return catalog.get_table(spec.identifier)
    options = dict(spec.options)
    if spec.lifecycle and lifecycle_options:
        options.update(lifecycle_options)
    return catalog.create_table(
        spec.identifier,
        schema=spec.schema,
        partition_keys=spec.partition_keys,
        primary_keys=spec.primary_keys,
        options=options,
        exist_ok=True,
    )
