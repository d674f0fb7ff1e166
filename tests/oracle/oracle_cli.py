#!/usr/bin/env python
"""Oracle command line: drive pypaimon (and pypaimon-rust) on real tables.

Runs with the ORACLE venv's python (pypaimon==2.1.0, pypaimon-rust==0.4.0,
pyarrow<20).  It must never import lakestore.  Results go to stdout as one JSON
document; diagnostics go to stderr.  Arrow data is exchanged as Arrow IPC files
(the file format, not the stream format).

Subcommands
  read           --table-path P [--snapshot-id N] [--native | --rust] --out F.arrow
  write          --warehouse W --identifier db.t --data F.arrow [--primary-keys a,b]
                 [--partition-keys dt] [--options JSON] [--native | --rust]
                 [--overwrite-partition JSON]
  snapshot       --table-path P [--snapshot-id N]
  manifests      --table-path P [--snapshot-id N]   (decoded manifest lists/entries)
  streaming-read --table-path P [--native] --out F.arrow [--max-polls K]
                 [--idle-seconds S]
  compute-bucket --data F.arrow --bucket-keys a,b --num-buckets N
  binary-row     --data F.arrow                      (BinaryRow hex of every row)

Native routing in pypaimon 2.1.0 (options, all default false):
  read.native.enabled   -> Rust plans and reads the splits (falls back to Python
                           silently-ish: TableRead._native_fallback)
  write.native.enabled  -> Rust writes the data files (NativeTableWrite)
  commit.native.enabled -> Rust commits -- but ONLY for REST catalogs
                           (native_commit._rest_catalog_supported); with a
                           filesystem warehouse the commit is always Python.
  --rust bypasses pypaimon and drives pypaimon_rust.datafusion directly
  (PaimonCatalog({"warehouse": W}).get_table(...)): Rust data files AND a Rust commit.
The JSON result reports which route was really taken.
"""

import argparse
import contextlib
import json
import logging
import os
import sys
import traceback


def _emit(obj):
    sys.stdout.write(json.dumps(obj, default=_json_default, sort_keys=True))
    sys.stdout.write("\n")
    sys.stdout.flush()


def _json_default(o):
    import datetime
    import decimal

    if isinstance(o, (bytes, bytearray)):
        return {"hex": bytes(o).hex()}
    if isinstance(o, (datetime.datetime, datetime.date, datetime.time)):
        return o.isoformat()
    if isinstance(o, decimal.Decimal):
        return str(o)
    return repr(o)


# ---------------------------------------------------------------------------
# table access


def _split_table_path(table_path):
    table_path = os.path.abspath(table_path.rstrip("/"))
    db_dir = os.path.dirname(table_path)
    table = os.path.basename(table_path)
    db_base = os.path.basename(db_dir)
    if not db_base.endswith(".db"):
        return None, None
    warehouse = os.path.dirname(db_dir)
    return warehouse, f"{db_base[:-3]}.{table}"


def open_table(table_path, extra_options=None):
    """Open a table from its path; catalog first, FileStoreTable.from_path fallback."""
    table = None
    warehouse, identifier = _split_table_path(table_path)
    if warehouse is not None:
        try:
            from pypaimon import CatalogFactory

            catalog = CatalogFactory.create({"warehouse": warehouse})
            table = catalog.get_table(identifier)
        except Exception as e:  # noqa: BLE001
            print(f"catalog open failed ({e}), using from_path", file=sys.stderr)
            table = None
    if table is None:
        from pypaimon.table.file_store_table import FileStoreTable

        table = FileStoreTable.from_path(os.path.abspath(table_path))
    if extra_options:
        table = table.copy(extra_options)
    return table


NATIVE_READ_OPTIONS = {"read.native.enabled": "true"}
NATIVE_WRITE_OPTIONS = {"write.native.enabled": "true", "commit.native.enabled": "true"}


class _Route:
    """Records which route (native / python) pypaimon really took."""

    def __init__(self):
        self.native_read_fallbacks = []
        self.native_commit_used = None
        self.writer_class = None

    def instrument(self):
        from pypaimon.read import table_read as tr

        orig_fb = tr.TableRead._native_fallback
        route = self

        def _fb(self_, reason, error=None, log=False):
            route.native_read_fallbacks.append(str(reason))
            return orig_fb(self_, reason, error, log)

        tr.TableRead._native_fallback = _fb

        from pypaimon.write import table_commit as tc

        for cls_name in dir(tc):
            cls = getattr(tc, cls_name)
            if isinstance(cls, type) and hasattr(cls, "_prepare_native_commit"):
                orig = cls.__dict__.get("_prepare_native_commit")
                if orig is None:
                    continue

                def _wrap(orig_):
                    def _p(self_, messages):
                        res = orig_(self_, messages)
                        route.native_commit_used = res is not None
                        return res

                    return _p

                cls._prepare_native_commit = _wrap(orig)


def _read_ipc(path):
    import pyarrow as pa

    with pa.memory_map(path, "r") as src:
        try:
            return pa.ipc.open_file(src).read_all()
        except pa.ArrowInvalid:
            pass
    with pa.memory_map(path, "r") as src:
        return pa.ipc.open_stream(src).read_all()


def _write_ipc(table, path):
    import pyarrow as pa

    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)


def _schema_order(table, result):
    import pyarrow as pa

    names = [f.name for f in table.table_schema.fields]
    if result is None:
        from pypaimon.schema.data_types import PyarrowFieldParser

        return PyarrowFieldParser.from_paimon_schema(table.table_schema.fields).empty_table()
    if list(result.column_names) != names and set(names) <= set(result.column_names):
        result = result.select(names)
    return result if isinstance(result, pa.Table) else pa.Table.from_batches([result])


# ---------------------------------------------------------------------------
# subcommands


def _rust_table(table_path):
    from pypaimon_rust.datafusion import PaimonCatalog

    warehouse, identifier = _split_table_path(table_path)
    if warehouse is None:
        raise ValueError(f"--rust needs <warehouse>/<db>.db/<table>: {table_path}")
    cat = PaimonCatalog({"warehouse": warehouse})
    return cat.get_table(tuple(identifier.split(".", 1)))


def _cmd_read_rust(args):
    import pyarrow as pa

    rt = _rust_table(args.table_path)
    opts = {}
    if args.snapshot_id is not None:
        opts["scan.snapshot-id"] = str(args.snapshot_id)
    rb = rt.new_read_builder(opts or None)
    splits = rb.new_scan().plan().splits()
    batches = rb.new_read().read(splits) if splits else []
    py_table = open_table(args.table_path)
    result = pa.Table.from_batches(batches) if batches else None
    result = _schema_order(py_table, result)
    _write_ipc(result, args.out)
    _emit({"rows": result.num_rows, "columns": result.column_names, "splits": len(splits), "route": "pypaimon_rust direct"})


def cmd_read(args):
    if args.rust:
        return _cmd_read_rust(args)
    route = _Route()
    route.instrument()
    opts = {}
    if args.native:
        opts.update(NATIVE_READ_OPTIONS)
    if args.snapshot_id is not None:
        opts["scan.snapshot-id"] = str(args.snapshot_id)
    if getattr(args, "tag", None):
        opts["scan.tag-name"] = args.tag
    if getattr(args, "timestamp_millis", None) is not None:
        opts["scan.timestamp-millis"] = str(args.timestamp_millis)
    table = open_table(args.table_path, opts)
    rb = table.new_read_builder()
    splits = rb.new_scan().plan().splits()
    result = rb.new_read().to_arrow(splits)
    result = _schema_order(table, result)
    _write_ipc(result, args.out)
    native_used = None
    if args.native:
        native_used = not route.native_read_fallbacks
    _emit(
        {
            "rows": result.num_rows,
            "columns": result.column_names,
            "splits": len(splits),
            "native_requested": bool(args.native),
            "native_used": native_used,
            "native_fallback_reasons": route.native_read_fallbacks,
        }
    )


def cmd_streaming_read(args):
    """Streaming read: the initial plan (full merged scan of the latest snapshot;
    scan.mode=from-snapshot + scan.snapshot-id were NOT honoured), then delta plans
    of any later snapshots, until no new plan arrives within --idle-seconds.
    Row kinds are returned in column `_row_kind` when pypaimon provides them."""
    import asyncio

    import pyarrow as pa

    opts = {}
    if args.native:
        opts.update(NATIVE_READ_OPTIONS)
    table = open_table(args.table_path, opts)
    rb = table.new_stream_read_builder().with_poll_interval_ms(50)
    with contextlib.suppress(Exception):  # older pypaimon: no row kinds
        rb = rb.with_include_row_kind(True)
    scan = rb.new_streaming_scan()
    read = rb.new_read()
    tables = []
    polls = []

    async def run():
        gen = scan.stream()
        for _ in range(args.max_polls):
            try:
                plan = await asyncio.wait_for(gen.__anext__(), timeout=args.idle_seconds)
            except (TimeoutError, StopAsyncIteration):
                break
            splits = plan.splits()
            t = read.to_arrow(splits) if splits else None
            polls.append(t.num_rows if t is not None else 0)
            if t is not None and t.num_rows:
                tables.append(t)

    asyncio.run(run())
    result = pa.concat_tables(tables) if tables else _schema_order(table, None)
    _write_ipc(result, args.out)
    _emit({"rows": result.num_rows, "polls": polls, "columns": result.column_names})


def _paimon_schema_from_arrow(pa_schema, primary_keys, partition_keys, options):
    import pyarrow as pa
    from pypaimon import Schema

    pk = set(primary_keys)
    fields = [f.with_nullable(False) if f.name in pk else f for f in pa_schema]
    arrow_schema = pa.schema(fields)
    schema = Schema.from_pyarrow_schema(
        arrow_schema, partition_keys=list(partition_keys) or None, primary_keys=list(primary_keys) or None, options=dict(options)
    )
    return schema, arrow_schema


def cmd_write(args):
    from pypaimon import CatalogFactory

    route = _Route()
    route.instrument()
    data = _read_ipc(args.data)
    primary_keys = [k for k in (args.primary_keys or "").split(",") if k]
    partition_keys = [k for k in (args.partition_keys or "").split(",") if k]
    options = json.loads(args.options) if args.options else {}
    options = {str(k): str(v) for k, v in options.items()}

    catalog = CatalogFactory.create({"warehouse": os.path.abspath(args.warehouse)})
    db = args.identifier.split(".")[0]
    catalog.create_database(db, True)
    schema, arrow_schema = _paimon_schema_from_arrow(data.schema, primary_keys, partition_keys, options)
    catalog.create_table(args.identifier, schema, True)
    table = catalog.get_table(args.identifier)
    if args.native:
        table = table.copy(dict(NATIVE_WRITE_OPTIONS))

    # cast to the table's arrow schema (NOT NULL pk columns etc.)
    from pypaimon.schema.data_types import PyarrowFieldParser

    table_arrow = PyarrowFieldParser.from_paimon_schema(table.table_schema.fields)
    data = data.select(table_arrow.names).cast(table_arrow)

    if args.rust:
        rt = _rust_table(table.table_path)
        wb = rt.new_batch_write_builder()
        if args.overwrite_partition is not None:
            wb = wb.with_overwrite(json.loads(args.overwrite_partition))
        w = wb.new_write()
        try:
            for batch in data.to_batches():
                w.write_arrow(batch)
            messages = w.prepare_commit()
        finally:
            w.close()
        c = wb.new_commit()
        try:
            c.commit(messages)
        finally:
            c.close()
        latest = rt.latest_snapshot()
        _emit(
            {
                "table_path": table.table_path,
                "snapshot_id": latest.id() if latest else None,
                "rows": data.num_rows,
                "route": "pypaimon_rust direct (write+commit)",
            }
        )
        return

    wb = table.new_batch_write_builder()
    if args.overwrite_partition is not None:
        wb = wb.overwrite(json.loads(args.overwrite_partition))
    writer = wb.new_write()
    route.writer_class = type(writer).__name__
    commit = wb.new_commit()
    try:
        writer.write_arrow(data)
        messages = writer.prepare_commit()
        commit.commit(messages)
    finally:
        writer.close()
        commit.close()
    # the writer may have switched from native to python lazily
    native_writer = getattr(writer, "_native_writer", None) is not None or (
        route.writer_class == "NativeTableWrite" and getattr(writer, "_python_writer", None) is None
    )
    latest = table.snapshot_manager().get_latest_snapshot()
    _emit(
        {
            "table_path": table.table_path if hasattr(table, "table_path") else None,
            "snapshot_id": latest.id if latest else None,
            "rows": data.num_rows,
            "native_requested": bool(args.native),
            "writer_class": route.writer_class,
            "native_write_used": bool(args.native and native_writer),
            "native_commit_used": route.native_commit_used,
        }
    )


def _snapshot_json(table_path, snapshot_id=None):
    snap_dir = os.path.join(table_path, "snapshot")
    if snapshot_id is None:
        ids = [int(n[len("snapshot-") :]) for n in os.listdir(snap_dir) if n.startswith("snapshot-") and n[len("snapshot-") :].isdigit()]
        if not ids:
            return None
        snapshot_id = max(ids)
    with open(os.path.join(snap_dir, f"snapshot-{snapshot_id}")) as f:
        return json.load(f)


def cmd_snapshot(args):
    snap = _snapshot_json(args.table_path, args.snapshot_id)
    # also show what pypaimon itself believes
    try:
        table = open_table(args.table_path)
        latest = table.snapshot_manager().get_latest_snapshot()
        pyp_id = latest.id if latest else None
    except Exception as e:  # noqa: BLE001
        pyp_id = f"error: {e}"
    _emit({"snapshot": snap, "pypaimon_latest_id": pyp_id})


def _avro_records(path):
    import fastavro

    with open(path, "rb") as fh:
        r = fastavro.reader(fh)
        return {"codec": r.codec, "writer_schema": r.writer_schema, "records": list(r)}


def cmd_manifests(args):
    snap = _snapshot_json(args.table_path, args.snapshot_id)
    mdir = os.path.join(args.table_path, "manifest")
    out = {"snapshot": snap, "lists": {}}
    if snap is None:
        _emit(out)
        return
    for key in ("baseManifestList", "deltaManifestList", "changelogManifestList"):
        name = snap.get(key)
        if not name:
            continue
        lst = _avro_records(os.path.join(mdir, name))
        manifests = []
        for rec in lst["records"]:
            m = _avro_records(os.path.join(mdir, rec["_FILE_NAME"]))
            manifests.append({"meta": rec, "codec": m["codec"], "entries": m["records"]})
        out["lists"][key] = {"name": name, "codec": lst["codec"], "manifests": manifests}
    _emit(out)


def _arrow_field_to_paimon(pa_schema):
    from pypaimon.schema.data_types import PyarrowFieldParser

    return PyarrowFieldParser.to_paimon_schema(pa_schema)


def _rows_as_values(data):
    cols = [c.to_pylist() for c in data.columns]
    return [tuple(c[i] for c in cols) for i in range(data.num_rows)]


def cmd_binary_row(args):
    from pypaimon.table.row.generic_row import GenericRow, GenericRowSerializer
    from pypaimon.table.row.row_kind import RowKind

    data = _read_ipc(args.data)
    fields = _arrow_field_to_paimon(data.schema)
    rows = [GenericRowSerializer.to_bytes(GenericRow(list(v), fields, RowKind.INSERT)).hex() for v in _rows_as_values(data)]
    _emit({"types": [str(f.type) for f in fields], "rows": rows})


def cmd_compute_bucket(args):
    from pypaimon.write.row_key_extractor import RowKeyExtractor, _bucket_from_hash

    data = _read_ipc(args.data)
    keys = [k for k in args.bucket_keys.split(",") if k]
    data = data.select(keys)
    fields = _arrow_field_to_paimon(data.schema)
    buckets = []
    hashes = []
    for v in _rows_as_values(data):
        h = RowKeyExtractor._binary_row_hash_code(v, fields)
        hashes.append(h)
        buckets.append(_bucket_from_hash(h, args.num_buckets))
    _emit({"buckets": buckets, "hashes": hashes})


def cmd_alter(args):
    """Schema evolution through pypaimon's filesystem catalog (alter_table)."""
    from pypaimon import CatalogFactory
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.schema.schema_change import SchemaChange

    catalog = CatalogFactory.create({"warehouse": args.warehouse})
    changes = []
    for change in json.loads(args.changes):
        kind = change[0]
        if kind == "add":
            changes.append(SchemaChange.add_column(change[1], AtomicType(change[2])))
        elif kind == "rename":
            changes.append(SchemaChange.rename_column(change[1], change[2]))
        elif kind == "drop":
            changes.append(SchemaChange.drop_column(change[1]))
        else:
            raise ValueError(f"unknown change {change!r}")
    catalog.alter_table(args.identifier, changes)
    table = catalog.get_table(args.identifier)
    _emit({"fields": [[f.id, f.name, str(f.type)] for f in table.table_schema.fields]})


def main(argv=None):
    p = argparse.ArgumentParser(prog="oracle_cli")
    sub = p.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("read")
    r.add_argument("--table-path", required=True)
    r.add_argument("--snapshot-id", type=int)
    r.add_argument("--tag", help="time travel to a tag (scan.tag-name)")
    r.add_argument("--timestamp-millis", type=int, help="time travel (scan.timestamp-millis)")
    r.add_argument("--native", action="store_true", help="pypaimon with read.native.enabled=true")
    r.add_argument("--rust", action="store_true", help="bypass pypaimon: pypaimon_rust.datafusion Table read")
    r.add_argument("--out", required=True)
    r.set_defaults(fn=cmd_read)

    s = sub.add_parser("streaming-read")
    s.add_argument("--table-path", required=True)
    s.add_argument("--native", action="store_true")
    s.add_argument("--out", required=True)
    s.add_argument("--max-polls", type=int, default=20)
    s.add_argument("--idle-seconds", type=float, default=2.0)
    s.set_defaults(fn=cmd_streaming_read)

    w = sub.add_parser("write")
    w.add_argument("--warehouse", required=True)
    w.add_argument("--identifier", required=True)
    w.add_argument("--data", required=True)
    w.add_argument("--primary-keys", default="")
    w.add_argument("--partition-keys", default="")
    w.add_argument("--options")
    w.add_argument("--native", action="store_true", help="pypaimon with write.native.enabled (Rust data files, Python commit)")
    w.add_argument("--rust", action="store_true", help="bypass pypaimon: pypaimon_rust writes AND commits")
    w.add_argument("--overwrite-partition")
    w.set_defaults(fn=cmd_write)

    sn = sub.add_parser("snapshot")
    sn.add_argument("--table-path", required=True)
    sn.add_argument("--snapshot-id", type=int)
    sn.set_defaults(fn=cmd_snapshot)

    m = sub.add_parser("manifests")
    m.add_argument("--table-path", required=True)
    m.add_argument("--snapshot-id", type=int)
    m.set_defaults(fn=cmd_manifests)

    b = sub.add_parser("binary-row")
    b.add_argument("--data", required=True)
    b.set_defaults(fn=cmd_binary_row)

    cb = sub.add_parser("compute-bucket")
    cb.add_argument("--data", required=True)
    cb.add_argument("--bucket-keys", required=True)
    cb.add_argument("--num-buckets", type=int, required=True)
    cb.set_defaults(fn=cmd_compute_bucket)

    al = sub.add_parser("alter")
    al.add_argument("--warehouse", required=True)
    al.add_argument("--identifier", required=True)
    al.add_argument("--changes", required=True, help='JSON list: [["add", name, "BIGINT"], ["rename", old, new], ["drop", name]]')
    al.set_defaults(fn=cmd_alter)

    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        args.fn(args)
    except Exception as e:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)
        print(f"oracle_cli {args.cmd} failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
