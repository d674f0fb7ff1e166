"""Tables Paimon 0.9 wrote, as older deployments still have them: lakestore reads them and
continues them, and Paimon 2.0.0 (the reference) reads the result.

The only interop tests still driven by Paimon 0.9 (pypaimon 0.2.0's bridge, ``java09``): one per
merge engine, one dynamic-bucket table and one deletion-vector table. Everything else runs
against Paimon 2.0.0 (and 1.4.2 where files differ), in the other modules of this folder."""

from __future__ import annotations

import pytest

import tests.interop.test_java_dynamic_buckets as dynamic
import tests.interop.test_java_merge_engines as scenario
from tests.compact._tables import live_files
from tests.interop.conftest import same_rows

pytestmark = pytest.mark.oracle
KEYS = scenario.KEYS


@pytest.mark.parametrize("engine", list(scenario.ENGINES))
def test_lakestore_continues_a_table_paimon09_wrote(java09, java, catalog, warehouse, engine):
    java09.create_table(warehouse, "db.t", scenario.SCHEMA, primary_keys=KEYS, partition_keys=["dt"], options=scenario.options(engine))
    for index in range(3):
        java09.write(warehouse, "db.t", scenario.as_table(scenario.commit_rows(engine, index)))
        if index == 1:
            java09.compact(warehouse, "db.t")  # levels above 0 and a level-0 run on top
    same_rows(catalog.get_table("db.t").to_arrow(), scenario.model(engine, 3), KEYS)
    for index in range(3, len(scenario.COMMITS)):
        catalog.get_table("db.t").write_arrow(scenario.as_table(scenario.commit_rows(engine, index)))
    expected = scenario.model(engine, len(scenario.COMMITS))
    same_rows(catalog.get_table("db.t").to_arrow(), expected, KEYS)
    same_rows(java.read(warehouse, "db.t"), expected, KEYS)
    table = catalog.get_table("db.t")
    table.compact(full=True)
    assert all(f.level > 0 for f in live_files(table))
    same_rows(java.read(warehouse, "db.t"), expected, KEYS)
    same_rows(java09.read(warehouse, "db.t"), expected, KEYS)


def test_lakestore_continues_a_dynamic_bucket_table_paimon09_wrote(java09, java, catalog, warehouse):
    java09.create_table(warehouse, "db.t", dynamic.SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=dynamic.OPTIONS)
    java09.create_table(warehouse, "db.ref", dynamic.SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=dynamic.OPTIONS)
    for name in ("t", "ref"):
        java09.write(warehouse, f"db.{name}", dynamic.BATCHES[0])
    catalog.get_table("db.t").write_arrow(dynamic.BATCHES[1])
    java.write(warehouse, "db.ref", dynamic.BATCHES[1])  # Paimon 2.0.0 continues its reference copy
    table = catalog.get_table("db.t")
    assert dynamic.layout(table.path) == dynamic.layout(catalog.get_table("db.ref").path)
    expected = dynamic.upserted(*dynamic.BATCHES[:2])
    same_rows(table.to_arrow(), expected, ["dt", "id"])
    same_rows(java.read(warehouse, "db.t"), expected, ["dt", "id"])
    assert all(len(b) == 1 for b in dynamic.buckets_of_keys(table.path).values())


def test_lakestore_continues_a_deletion_vector_table_paimon09_wrote(java09, java, catalog, warehouse):
    options = {**scenario.options("deduplicate"), "deletion-vectors.enabled": "true"}
    java09.create_table(warehouse, "db.t", scenario.SCHEMA, primary_keys=KEYS, partition_keys=["dt"], options=options)
    for index in range(3):
        java09.write(warehouse, "db.t", scenario.as_table(scenario.commit_rows("deduplicate", index)))
    same_rows(catalog.get_table("db.t").to_arrow(), scenario.model("deduplicate", 3), KEYS)
    for index in range(3, len(scenario.COMMITS)):
        catalog.get_table("db.t").write_arrow(scenario.as_table(scenario.commit_rows("deduplicate", index)))
    expected = scenario.model("deduplicate", len(scenario.COMMITS))
    same_rows(catalog.get_table("db.t").to_arrow(), expected, KEYS)
    same_rows(java.read(warehouse, "db.t"), expected, KEYS)
    java.compact(warehouse, "db.t")
    same_rows(catalog.get_table("db.t").to_arrow(), expected, KEYS)
