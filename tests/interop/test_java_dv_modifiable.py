"""``deletion-vectors.modifiable`` against Apache Paimon 2.0.0 Java: the option only lets an ALTER
switch ``deletion-vectors.enabled`` on a table that already has it set (Paimon's
``SchemaManager.checkAlterTableOption``). After the switch both engines read the table in its new
mode: switched on, rows still only in level 0 are hidden until a compaction moves them up;
switched off, every level is merged on read. Either engine alters, writes and compacts, the other
reads the same rows."""

from __future__ import annotations

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import SchemaChangeError
from lakestore.meta.schema_change import SetOption
from tests._support import assert_same_rows
from tests.oracle.java_driver import JavaOracleError

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
KEYS = ["id"]


def _batch(ids: list[int], value: int) -> pa.Table:
    return pa.table({"id": ids, "v": [value] * len(ids)}, schema=SCHEMA)


def _values(table: pa.Table) -> dict[int, int]:
    return dict(zip(table["id"].to_pylist(), table["v"].to_pylist(), strict=True))


def _same(java, warehouse, t: lakestore.Table) -> dict[int, int]:
    ours, theirs = t.to_arrow(), java.read(warehouse, "db.t")
    assert_same_rows(ours, theirs, KEYS)
    return _values(ours)


@pytest.mark.parametrize("alterer", ["lakestore", "java"])
def test_deletion_vectors_switched_on_and_off_by_either_engine(java, tmp_path, alterer):
    warehouse = tmp_path / "wh"
    catalog = lakestore.Catalog(str(warehouse))
    catalog.create_database("db")
    options = {"bucket": "2", "deletion-vectors.modifiable": "true"}
    catalog.create_table("db.t", schema=SCHEMA, primary_keys=KEYS, options=options)

    def alter(enabled: bool) -> lakestore.Table:
        if alterer == "lakestore":
            catalog.alter_table("db.t", [SetOption("deletion-vectors.enabled", str(enabled).lower())])
        else:
            java.alter(warehouse, "db.t", [{"op": "set_option", "key": "deletion-vectors.enabled", "value": str(enabled).lower()}])
        return catalog.get_table("db.t")

    t = catalog.get_table("db.t")
    t.write_arrow(_batch(list(range(1, 9)), 1))
    t.compact(full=True)
    java.write(warehouse, "db.t", _batch([1, 2], 2))  # level 0, merged on read
    assert _same(java, warehouse, t) == {**dict.fromkeys(range(1, 9), 1), 1: 2, 2: 2}

    t = alter(True)
    assert t.schema.core_options().deletion_vectors
    # deletion-vector reads skip level 0: the second write is hidden until a compaction
    assert _same(java, warehouse, t) == dict.fromkeys(range(1, 9), 1)
    t.write_arrow(_batch([3], 3))  # lakestore's deletion-vector writer moves the bucket's level 0 up
    java.write(warehouse, "db.t", _batch([4], 4))  # and so does Java's
    assert {3: 3, 4: 4}.items() <= _same(java, warehouse, t).items()
    t.compact(full=True)
    expected = {**dict.fromkeys(range(1, 9), 1), 1: 2, 2: 2, 3: 3, 4: 4}
    assert _same(java, warehouse, t) == expected

    t = alter(False)
    assert not t.schema.core_options().deletion_vectors
    assert _same(java, warehouse, t) == expected  # merged on read again, vectors ignored
    t.write_arrow(_batch([5], 5))
    java.write(warehouse, "db.t", _batch([6], 6))
    assert _same(java, warehouse, t) == {**expected, 5: 5, 6: 6}


def test_without_modifiable_neither_engine_switches_deletion_vectors(java, tmp_path):
    warehouse = tmp_path / "wh"
    catalog = lakestore.Catalog(str(warehouse))
    catalog.create_database("db")
    catalog.create_table("db.t", schema=SCHEMA, primary_keys=KEYS, options={"bucket": "1"})
    catalog.get_table("db.t").write_arrow(_batch([1], 1))
    with pytest.raises(SchemaChangeError, match="deletion-vectors.enabled"):
        catalog.alter_table("db.t", [SetOption("deletion-vectors.enabled", "true")])
    with pytest.raises(JavaOracleError, match="deletion-vectors.modifiable"):
        java.alter(warehouse, "db.t", [{"op": "set_option", "key": "deletion-vectors.enabled", "value": "true"}])
    # set in the same alter as the switch, it does not count (Paimon checks the table's options before it)
    with pytest.raises(SchemaChangeError, match="deletion-vectors.enabled"):
        catalog.alter_table("db.t", [SetOption("deletion-vectors.modifiable", "true"), SetOption("deletion-vectors.enabled", "true")])
    assert not catalog.get_table("db.t").schema.core_options().deletion_vectors
