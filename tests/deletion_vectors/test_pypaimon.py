"""pypaimon 2.1.0 (pure Python and its Rust core) read the deletion-vector tables lakestore writes."""

from __future__ import annotations

import pytest

import lakestore
import tests.interop.test_java_merge_engines as scenario
from tests.oracle.driver import oracle_available, oracle_read

pytestmark = [pytest.mark.oracle, pytest.mark.skipif(not oracle_available(), reason="oracle venv missing")]


@pytest.mark.parametrize("engine", ["deduplicate", "aggregation"])
def test_pypaimon_reads_lakestore_vectors(tmp_path, engine):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    options = {**scenario.options(engine), "deletion-vectors.enabled": "true"}
    table = catalog.create_table("db.t", schema=scenario.SCHEMA, partition_keys=["dt"], primary_keys=scenario.KEYS, options=options)
    for index in range(len(scenario.COMMITS)):
        table.write_arrow(scenario.as_table(scenario.commit_rows(engine, index)))
    expected = scenario.model(engine, len(scenario.COMMITS))
    key = lambda r: (r["dt"], r["id"])  # noqa: E731
    want = sorted(expected.to_pylist(), key=key)
    assert sorted(table.to_arrow().to_pylist(), key=key) == want
    for native in (False, True):
        got, info = oracle_read(table.path, native=native, return_info=True)
        assert sorted(got.select(expected.column_names).cast(expected.schema).to_pylist(), key=key) == want, info
