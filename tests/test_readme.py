"""The README's library snippets run as written, twice in a row on the same warehouse (a reader
who runs them again must not hit "already exists"); its JDBC catalog snippet opens a catalog
that keeps databases and tables in SQLite inside the warehouse."""

from __future__ import annotations

import pyarrow as pa

import lakestore
from lakestore.catalog import JdbcCatalog
from tests._support import readme_python_blocks


def test_library_snippets_run_twice(tmp_path):
    snippets = readme_python_blocks("Using lakestore as a library")
    assert len(snippets) >= 3
    code = "\n".join(snippets).replace('"/tmp/warehouse"', repr(str(tmp_path / "warehouse")))
    for run in range(2):
        namespace: dict = {}
        exec(compile(code, f"README.md (run {run + 1})", "exec"), namespace)  # noqa: S102 - the README's own code
        table = namespace["table"]
        assert table.find_commit("job-1", 7) is not None
        assert table.latest_snapshot() is not None


def test_jdbc_catalog_snippet(tmp_path):
    (snippet,) = readme_python_blocks("Catalogs: filesystem or Paimon's JDBC catalog")
    warehouse = tmp_path / "warehouse"
    assert snippet.count('"/tmp/warehouse"') == 1
    namespace: dict = {}
    exec(compile(snippet.replace('"/tmp/warehouse"', repr(str(warehouse))), "README.md", "exec"), namespace)  # noqa: S102
    catalog = namespace["catalog"]
    assert isinstance(catalog, JdbcCatalog)
    catalog.create_database("db")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    table = catalog.create_table("db.orders", schema=schema, primary_keys=["id"], options={"bucket": "1"})
    table.write_arrow(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=schema))
    assert (warehouse / "jdbc-catalog.sqlite").is_file()
    assert (warehouse / "db.db" / "orders" / "schema" / "schema-0").is_file()  # table files at the filesystem catalog's paths
    # a new catalog with the same options finds them in the SQLite file
    again = lakestore.Catalog(str(warehouse), options={"metastore": "jdbc"})
    assert again.list_databases() == ["db"]
    assert again.list_tables("db") == ["orders"]
    assert again.get_table("db.orders").to_arrow().sort_by("id").to_pydict() == {"id": [1, 2], "v": ["a", "b"]}
