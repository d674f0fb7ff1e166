"""pypaimon 2.1's REST catalog as a client of ``lakestore serve``; runs in the oracle venv
(``.venv-oracle``), driven by the tests through subprocess. Nothing here imports lakestore.

    python pypaimon_client.py '{"options": {...}, "ops": [{"op": "create_database", "name": "db"}, ...]}'

Prints one JSON document: the result of each op. An op with ``"expect_error": true`` records the
exception's class name instead of failing. ``commit_loop`` commits ``count`` one-row batches
(``client``, ``seq``) and appends each acknowledged ``seq`` to ``ack_file`` as it lands.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import pyarrow as pa
from pypaimon import CatalogFactory, Schema

TYPES = {"int64": pa.int64(), "int32": pa.int32(), "string": pa.string(), "double": pa.float64()}


def _schema(fields: list[list[str]], primary_keys: list[str]) -> pa.Schema:
    return pa.schema([pa.field(name, TYPES[kind], nullable=name not in primary_keys) for name, kind in fields])


def _write(catalog: Any, identifier: str, rows: dict[str, list[Any]], table_options: dict[str, str] | None = None) -> None:
    table = catalog.get_table(identifier)
    if table_options:
        table = table.copy(table_options)
    builder = table.new_batch_write_builder()
    write, commit = builder.new_write(), builder.new_commit()
    try:
        arrow_schema = pa.schema([pa.field(f.name, f.type) for f in _table_arrow_schema(table)])
        write.write_arrow(pa.Table.from_pydict(rows, schema=arrow_schema))
        commit.commit(write.prepare_commit())
    finally:
        write.close()
        commit.close()


def _table_arrow_schema(table: Any) -> pa.Schema:
    from pypaimon.schema.data_types import PyarrowFieldParser

    return PyarrowFieldParser.from_paimon_schema(table.table_schema.fields)


def _read(catalog: Any, identifier: str) -> dict[str, list[Any]]:
    table = catalog.get_table(identifier)
    builder = table.new_read_builder()
    data = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    return data.to_pydict()


def run(options: dict[str, str], op: dict[str, Any]) -> Any:
    catalog = _reconnect(options) if op.get("tolerate_errors") else CatalogFactory.create(options)
    kind = op["op"]
    if kind == "list_databases":
        return catalog.list_databases()
    if kind == "create_database":
        catalog.create_database(op["name"], op.get("ignore_if_exists", False))
        return None
    if kind == "list_tables":
        return catalog.list_tables(op["database"])
    if kind == "create_table":
        schema = Schema.from_pyarrow_schema(
            _schema(op["fields"], op.get("primary_keys", [])),
            partition_keys=op.get("partition_keys") or None,
            primary_keys=op.get("primary_keys") or None,
            options=op.get("options") or {},
        )
        catalog.create_table(op["identifier"], schema, op.get("ignore_if_exists", False))
        return None
    if kind == "drop_table":
        catalog.drop_table(op["identifier"])
        return None
    if kind == "write":
        _write(catalog, op["identifier"], op["rows"], op.get("table_options"))
        return None
    if kind == "read":
        return _read(catalog, op["identifier"])
    if kind == "add_column":
        from pypaimon.schema.data_types import AtomicType
        from pypaimon.schema.schema_change import SchemaChange

        catalog.alter_table(op["identifier"], [SchemaChange.add_column(op["name"], AtomicType(op["type"]))], False)
        return None
    if kind == "set_option":
        from pypaimon.schema.schema_change import SchemaChange

        catalog.alter_table(op["identifier"], [SchemaChange.set_option(op["key"], op["value"])], False)
        return None
    if kind == "create_tag":
        catalog.create_tag(op["identifier"], op["tag"], op.get("snapshot_id"))
        return None
    if kind == "list_tags":
        return catalog.list_tags_paged(op["identifier"]).elements
    if kind == "commit_loop":
        acked, failed = 0, 0
        with open(op["ack_file"], "a") as acks:
            for seq in range(op["count"]):
                try:
                    _write(catalog, op["identifier"], {"client": [op["client"]], "seq": [seq]})
                except Exception as exc:  # the server may be gone (the SIGKILL test): try the next
                    if not op.get("tolerate_errors"):
                        raise
                    failed += 1
                    print(f"commit {seq} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                    time.sleep(0.2)
                    catalog = _reconnect(options)
                    continue
                acks.write(f"{seq}\n")
                acks.flush()
                acked += 1
        return {"acked": acked, "failed": failed}
    raise ValueError(f"unknown op {kind}")


def _reconnect(options: dict[str, str]) -> Any:
    """The catalog once the server answers again (a restart under load takes seconds)."""
    for _ in range(600):
        try:
            return CatalogFactory.create(options)
        except Exception:
            time.sleep(0.1)
    return CatalogFactory.create(options)


def main() -> None:
    request = json.loads(sys.argv[1])
    results = []
    for op in request["ops"]:
        try:
            results.append({"ok": run(request["options"], op)})
        except Exception as exc:
            if not op.get("expect_error"):
                raise
            results.append({"error": type(exc).__name__, "message": str(exc)[:500]})
    print(json.dumps(results, default=str))


if __name__ == "__main__":
    main()
