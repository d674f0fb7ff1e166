"""lakestore's delete and update against Flink SQL's batch ``DELETE FROM`` / ``UPDATE`` with Paimon
2.0.0's connector on the same tables: two copies of each table get the same rows; Flink changes
one, lakestore the other; both then hold the same rows, and the commits hold the same rows by
row kind. One Flink session for the module (tests/oracle/flink_driver.py); each row-level
statement is a Flink batch job (10-15 s here), so the statements are few: the mechanics they
share with the other merge engines are checked against Paimon Java in test_row_changes.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from lakestore import col
from lakestore.errors import SchemaMismatchError, UnsupportedTableError
from tests.oracle.flink_driver import FlinkOracle, FlinkOracleError, flink_oracle
from tests.oracle.java_driver import java_oracle

pytestmark = [pytest.mark.flink, pytest.mark.oracle]

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64()), ("s", pa.string())])
KEYS = ["dt", "id"]
TABLES = {
    "dedup": {"bucket": "2", "changelog-producer": "input"},  # the commits' changelogs compared too
    "partial": {"bucket": "1", "merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"},
    "agg": {
        "bucket": "1",
        "merge-engine": "aggregation",
        "fields.v.aggregate-function": "sum",
        "fields.s.aggregate-function": "last_non_null_value",
        "aggregation.remove-record-on-delete": "true",
    },
}
# (Flink statement on table {t}, the same change through lakestore)
Step = tuple[str, Any]
STEPS: dict[str, list[Step]] = {
    "dedup": [
        ("DELETE FROM {t} WHERE v > 2 AND s = 'x'", lambda t: t.delete((col("v") > 2) & (col("s") == "x"))),
        (
            "UPDATE {t} SET s = CAST(NULL AS STRING), v = 100 WHERE id < 4",
            lambda t: t.update(set={"s": None, "v": 100}, filter=col("id") < 4),
        ),
        ("DELETE FROM {t} WHERE dt = 'b'", lambda t: t.delete(col("dt") == "b")),
    ],
    "partial": [
        ("DELETE FROM {t} WHERE v >= 5 OR s = 'y'", lambda t: t.delete((col("v") >= 5) | (col("s") == "y"))),
        # a write of some columns: the others keep their values (or stay null for a new key)
        (
            "INSERT INTO {t} (dt, id, v) VALUES ('a', 0, 50), ('c', 11, 7)",
            lambda t: t.upsert(pa.table({"dt": ["a", "c"], "id": [0, 11], "v": [50, 7]})),
        ),
    ],
    "agg": [("DELETE FROM {t} WHERE s = 'z' OR id = 0", lambda t: t.delete((col("s") == "z") | (col("id") == 0)))],
}


def initial_rows() -> pa.Table:
    rows = [{"dt": dt, "id": i, "v": None if i % 5 == 4 else i, "s": ["x", "y", "z"][i % 3]} for dt in ("a", "b", "c") for i in range(10)]
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def ddl(name: str, options: dict[str, str]) -> str:
    with_ = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
    return (
        f"CREATE TABLE p.db.{name} (dt STRING, id BIGINT, v BIGINT, s STRING, PRIMARY KEY (dt, id) NOT ENFORCED)"
        f" PARTITIONED BY (dt) WITH ({with_})"
    )


def rows_of(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.select(SCHEMA.names).to_pylist(), key=lambda r: (r["dt"], r["id"]))


def commit_rows(table: lakestore.Table, snapshot_id: int) -> list[tuple[Any, ...]]:
    """The rows a snapshot added, with their row kinds (its changelog, on a table with a producer)."""
    changes = table.read_changes(from_snapshot_id=snapshot_id - 1, to_snapshot_id=snapshot_id)
    return sorted((r["_row_kind"], r["dt"], r["id"], r["v"], r["s"]) for r in changes.to_pylist())


@pytest.fixture(scope="module")
def flink(tmp_path_factory: pytest.TempPathFactory) -> tuple[FlinkOracle, Path]:
    warehouse = tmp_path_factory.mktemp("flink-dml") / "wh"
    lakestore.Catalog(str(warehouse)).create_database("db")
    oracle = flink_oracle()
    oracle.use_warehouse(warehouse)
    return oracle, warehouse


@pytest.mark.parametrize("kind", sorted(TABLES))
def test_same_rows_as_flink(flink: tuple[FlinkOracle, Path], kind: str) -> None:
    oracle, warehouse = flink
    catalog = lakestore.Catalog(str(warehouse))
    theirs, ours = f"{kind}_flink", f"{kind}_lakestore"
    oracle.sql(ddl(theirs, TABLES[kind]), ddl(ours, TABLES[kind]), mode="batch")
    for name in (theirs, ours):
        catalog.get_table(f"db.{name}").write_arrow(initial_rows())
    before = tuple(catalog.get_table(f"db.{n}").latest_snapshot().id for n in (theirs, ours))
    for statement, change in STEPS[kind]:
        oracle.sql(statement.format(t=f"p.db.{theirs}"), mode="batch")
        change(catalog.get_table(f"db.{ours}"))
        flink_table, our_table = catalog.get_table(f"db.{theirs}"), catalog.get_table(f"db.{ours}")
        assert rows_of(our_table.to_arrow()) == rows_of(flink_table.to_arrow()), statement
        a, b = flink_table.latest_snapshot(), our_table.latest_snapshot()
        assert a is not None and b is not None and a.commit_kind == b.commit_kind, statement
        assert a.id > before[0] and b.id > before[1], statement  # every step changes rows (a vacuous one checks nothing)
        before = (a.id, b.id)
        if a.commit_kind == "APPEND":
            assert commit_rows(our_table, b.id) == commit_rows(flink_table, a.id), statement
            # Flink's sink records no operation; paimon-spark's DELETE / UPDATE commits do, as lakestore's
            assert a.operation is None and b.operation == {"DELETE": "DELETE", "UPDATE": "UPDATE"}.get(statement.split()[0]), statement
        else:  # a filter on partition columns only: both truncate the partitions
            assert a.operation == b.operation == "TRUNCATE", statement
    java = java_oracle()
    assert rows_of(java.read(warehouse, f"db.{ours}")) == rows_of(java.read(warehouse, f"db.{theirs}"))


@pytest.mark.parametrize(
    ("options", "statement", "change"),
    [
        ({"merge-engine": "first-row"}, "DELETE FROM {t} WHERE v = 1", lambda t: t.delete(col("v") == 1)),
        ({"merge-engine": "partial-update"}, "DELETE FROM {t} WHERE v = 1", lambda t: t.delete(col("v") == 1)),
        ({"merge-engine": "aggregation"}, "UPDATE {t} SET s = 'q' WHERE v = 1", lambda t: t.update(set={"s": "q"}, filter=col("v") == 1)),
        ({}, "UPDATE {t} SET id = 3 WHERE v = 1", lambda t: t.update(set={"id": 3}, filter=col("v") == 1)),
    ],
)
def test_refused_as_flink_refuses(flink: tuple[FlinkOracle, Path], options: dict[str, str], statement: str, change: Any) -> None:
    """What Paimon's Flink sink refuses to delete or update, lakestore refuses, committing nothing."""
    oracle, warehouse = flink
    name = f"refused_{abs(hash((statement, tuple(options.items())))) % 10**8}"
    oracle.sql(ddl(name, {"bucket": "1", **options}), mode="batch")
    table = lakestore.Catalog(str(warehouse)).get_table(f"db.{name}")
    table.write_arrow(initial_rows())
    latest = table.latest_snapshot()
    with pytest.raises(FlinkOracleError):
        oracle.sql(statement.format(t=f"p.db.{name}"), mode="batch")
    with pytest.raises((UnsupportedTableError, SchemaMismatchError)):
        change(table)
    assert table.latest_snapshot() == latest
