"""Run by the pypaimon oracle's own venv (tests/catalog/test_jdbc_pypaimon.py): pypaimon 2.1's
JDBC catalog on lakestore's catalog database. Lists what lakestore registered, reads ``db.t``,
then creates and writes ``db.p``; prints one JSON document. Imports pypaimon only."""

import json
import sys

import pyarrow as pa
from pypaimon import CatalogFactory, Schema


def main() -> None:
    warehouse, uri = sys.argv[1], sys.argv[2]
    catalog = CatalogFactory.create({"warehouse": warehouse, "metastore": "jdbc", "uri": uri})
    out = {"databases": sorted(catalog.list_databases()), "tables": sorted(catalog.list_tables("db"))}
    table = catalog.get_table("db.t")
    builder = table.new_read_builder()
    out["rows"] = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()

    arrow_schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    schema = Schema.from_pyarrow_schema(arrow_schema, primary_keys=["id"], options={"bucket": "1"})
    catalog.create_table("db.p", schema, False)
    written = catalog.get_table("db.p")
    write_builder = written.new_batch_write_builder()
    writer, commit = write_builder.new_write(), write_builder.new_commit()
    writer.write_arrow(pa.table({"id": [7, 8], "v": ["p", "q"]}, schema=arrow_schema))
    commit.commit(writer.prepare_commit())
    writer.close()
    commit.close()
    out["tables_after"] = sorted(catalog.list_tables("db"))
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
