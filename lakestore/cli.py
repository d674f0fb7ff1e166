"""The ``lakestore`` command line: inspect and maintain the tables of a warehouse.

    lakestore --warehouse /wh databases
    lakestore -w /wh tables db
    lakestore -w /wh describe db.orders [--snapshot N | --tag T]
    lakestore -w /wh snapshots db.orders
    lakestore -w /wh files db.orders [--snapshot N | --tag T]    LSM shape per partition/bucket/level
    lakestore -w /wh tags db.orders
    lakestore -w /wh inspect db.orders files [--snapshot N | --tag T]   Paimon's system tables ($files, ...)
    lakestore -w /wh compact db.orders [--full] [--partition dt=2024-01-01]
    lakestore -w /wh expire db.orders [--retain-min N] [--retain-max N] [--older-than 1h]
    lakestore -w /wh create-tag db.orders NAME [--snapshot N] [--time-retained 7d]
    lakestore -w /wh delete-tag db.orders NAME
    lakestore -w /wh rollback db.orders (--snapshot N | --tag NAME)
    lakestore -w /wh remove-orphans db.orders [--older-than 1d] [--dry-run]
    lakestore -w /wh expire-partitions db.orders
    lakestore -w /wh branches db.orders
    lakestore -w /wh create-branch db.orders NAME [--tag T]     then address it as 'db.orders$branch_NAME'
    lakestore -w /wh delete-branch db.orders NAME
    lakestore -w /wh fast-forward db.orders NAME
    lakestore -w /wh -o metastore=jdbc -o uri=jdbc:postgresql://host/db -o jdbc.user=u tables   Paimon's JDBC catalog
    lakestore serve --warehouse /wh [--host H --port P --auth-db D --init]   Paimon REST catalog server
    lakestore serve-admin --warehouse /wh (init|add-principal|remove-principal|issue-token|grant|revoke|revoke-token|list) ...

Human-readable tables by default, ``--json`` for machines (one JSON document on stdout).
Progress goes to stderr. Exit codes: 0 ok, 1 error, 2 usage, 3 not found.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lakestore.catalog import Catalog
from lakestore.errors import (
    DatabaseNotFoundError,
    InvalidIdentifierError,
    LakestoreError,
    SnapshotNotFoundError,
    TableNotFoundError,
    TagNotFoundError,
)
from lakestore.rest.command import admin_main, serve_main
from lakestore.scan import StoreScan
from lakestore.system import SYSTEM_TABLES
from lakestore.table import Table
from lakestore.units import parse_duration_ms

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_NOT_FOUND = 0, 1, 2, 3
_NOT_FOUND = (DatabaseNotFoundError, TableNotFoundError, SnapshotNotFoundError, TagNotFoundError)


class UsageError(Exception):
    pass


# -- output ------------------------------------------------------------------------------------
def _render_table(rows: list[dict[str, Any]], columns: Sequence[str] | None = None) -> str:
    if not rows:
        return "(none)"
    cols = list(columns or rows[0].keys())
    cells = [[("" if r.get(c) is None else str(r.get(c))) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    line = "  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=False))
    sep = "  ".join("-" * w for w in widths)
    body = ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=False)) for row in cells]
    return "\n".join([line, sep, *body])


def _fmt_time(ms: int | None) -> str | None:
    if ms is None:
        return None
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")


def _progress(args: argparse.Namespace, message: str) -> None:
    if not args.quiet:
        print(message, file=sys.stderr, flush=True)


# -- commands ----------------------------------------------------------------------------------
def _catalog(args: argparse.Namespace) -> Catalog:
    """The warehouse's catalog with the ``-o key=value`` catalog options (``metastore=jdbc``, ``uri``, ...)."""
    options = {}
    for item in getattr(args, "catalog_option", None) or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"catalog option {item!r}: expected KEY=VALUE, e.g. -o metastore=jdbc")
        options[key.strip()] = value
    return Catalog(args.warehouse, options=options)


def _table(args: argparse.Namespace) -> Table:
    return _catalog(args).get_table(args.table)


def cmd_databases(args: argparse.Namespace) -> Any:
    return [{"database": d} for d in _catalog(args).list_databases()]


def cmd_tables(args: argparse.Namespace) -> Any:
    catalog = _catalog(args)
    databases = [args.database] if args.database else catalog.list_databases()
    return [{"table": f"{db}.{t}"} for db in databases for t in catalog.list_tables(db)]


def cmd_describe(args: argparse.Namespace) -> Any:
    table = _table(args)
    schema = table.schema
    latest = shown = table.latest_snapshot()
    if args.snapshot is not None or args.tag is not None:
        # time travel: the schema that snapshot was written with, as reads of it see it
        shown = StoreScan(table.store).resolve_snapshot(args.snapshot, args.tag)
        schema = table.store.schema_at(shown)
    return {
        "table": table.identifier,
        "path": table.path,
        "schema_id": schema.id,
        "fields": [{"id": f.id, "name": f.name, "type": f.type.to_paimon(), "comment": f.description} for f in schema.fields],
        "partition_keys": list(schema.partition_keys),
        "primary_keys": list(schema.primary_keys),
        "options": dict(schema.options),
        "comment": schema.comment,
        "latest_snapshot": latest.id if latest else None,
        "snapshot": shown.id if shown else None,
        "total_records": shown.total_record_count if shown else 0,
    }


def cmd_snapshots(args: argparse.Namespace) -> Any:
    return [
        {
            "id": s.id,
            "schema_id": s.schema_id,
            "kind": s.commit_kind,
            "time": _fmt_time(s.time_millis),
            "time_millis": s.time_millis,
            "total_records": s.total_record_count,
            "delta_records": s.delta_record_count,
            "commit_user": s.commit_user,
        }
        for s in _table(args).snapshots()
    ]


def cmd_files(args: argparse.Namespace) -> Any:
    table = _table(args)
    snapshot = StoreScan(table.store).resolve_snapshot(args.snapshot, args.tag)
    shape: dict[tuple[str, int, int], dict[str, Any]] = {}
    for f in table.store.live_files(snapshot) if snapshot is not None else []:
        part = f.partition_path or "/"
        row = shape.setdefault(
            (part, f.bucket, f.level), {"partition": part, "bucket": f.bucket, "level": f.level, "files": 0, "rows": 0, "bytes": 0}
        )
        row["files"] += 1
        row["rows"] += f.rows
        row["bytes"] += f.bytes
    return [shape[k] for k in sorted(shape)]


def cmd_inspect(args: argparse.Namespace) -> Any:
    """Paimon's system table ``args.system`` of the table (``db.t$<system>``), one dict per row."""
    table = _table(args)
    if args.snapshot is not None or args.tag is not None:
        return table.inspect.table(args.system, snapshot_id=args.snapshot, tag=args.tag).to_pylist()
    return table.inspect.table(args.system).to_pylist()


def cmd_index_files(args: argparse.Namespace) -> Any:
    table = _table(args)
    snapshot = StoreScan(table.store).resolve_snapshot(args.snapshot, args.tag)
    return [
        {
            "partition": f.partition_path or "/",
            "bucket": f.bucket,
            "type": f.index_type,
            "file": f.file_name,
            "rows": f.rows,
            "bytes": f.bytes,
        }
        for f in sorted(
            table.store.index_files(snapshot) if snapshot is not None else [], key=lambda f: (f.partition_path, f.bucket, f.index_type)
        )
    ]


def cmd_tags(args: argparse.Namespace) -> Any:
    return [
        {
            "tag": t.name,
            "snapshot_id": t.snapshot_id,
            "records": t.snapshot.total_record_count,
            "created": t.create_time.strftime("%Y-%m-%d %H:%M:%S") if t.create_time else None,
            "time_retained_ms": t.time_retained_ms,
        }
        for t in _table(args).manage.tags()
    ]


def _partitions(specs: Sequence[str] | None) -> list[dict[str, str]] | None:
    if not specs:
        return None
    out = []
    for spec in specs:
        part = {}
        for item in spec.split(","):
            if "=" not in item:
                raise UsageError(f"--partition expects k=v[,k2=v2], got {spec!r}")
            k, v = item.split("=", 1)
            part[k.strip()] = v
        out.append(part)
    return out


def cmd_compact(args: argparse.Namespace) -> Any:
    table = _table(args)
    _progress(args, f"compacting {table.identifier} ({'full' if args.full else 'minor'}) ...")
    started = time.time()
    snapshots = table.compact(full=args.full, partitions=_partitions(args.partition))
    _progress(args, f"done in {time.time() - started:.1f}s")
    out: dict[str, Any] = {"snapshots": [s.id for s in snapshots]}
    if not snapshots:
        what = "" if args.full else " (the picker found no run to merge; --full merges every bucket into one file)"
        out["note"] = f"nothing to compact{what}"
    return out


def _duration(text: str) -> int:
    try:
        return parse_duration_ms(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


@dataclass(frozen=True)
class _Retention:
    """The retention ``expire`` applies, each bound with where it comes from (a flag or an option)."""

    min: int
    min_source: str
    max: int | None
    max_source: str
    time_ms: int
    time_source: str


def _retention(args: argparse.Namespace, table: Table) -> _Retention:
    """Validate the ``--retain-*`` / ``--older-than`` flags against each other and the table's
    options, naming the flags (not the library's parameters) in errors."""
    options = table.options
    for flag, value in (("--retain-min", args.retain_min), ("--retain-max", args.retain_max)):
        if value is not None and value < 1:
            raise UsageError(f"{flag} must be at least 1, got {value}")
    retention = _Retention(
        min=args.retain_min if args.retain_min is not None else options.snapshot_num_retained_min,
        min_source="--retain-min" if args.retain_min is not None else "the table's snapshot.num-retained.min",
        max=args.retain_max if args.retain_max is not None else options.snapshot_num_retained_max,
        max_source="--retain-max" if args.retain_max is not None else "the table's snapshot.num-retained.max",
        time_ms=_duration(args.older_than) if args.older_than else options.snapshot_time_retained_ms,
        time_source="--older-than" if args.older_than else "the table's snapshot.time-retained",
    )
    if retention.max is not None and retention.max < retention.min:
        hint = "; lower --retain-min too" if args.retain_min is None else ""
        raise UsageError(f"{retention.max_source} ({retention.max}) is below {retention.min_source} ({retention.min}){hint}")
    return retention


def _why_nothing_expired(table: Table, retention: _Retention, now_ms: int) -> str:
    ids = table.store.snapshot_manager.list_ids()
    if len(ids) <= retention.min:
        return f"nothing expired: {len(ids)} snapshots, and {retention.min_source} keeps the newest {retention.min}"
    earliest = ids[0]
    pinned = {name: next_id for name, next_id in table.manage.consumers().items() if next_id <= earliest}
    if pinned:
        name, next_id = min(pinned.items(), key=lambda item: item[1])
        return f"nothing expired: consumer {name!r} has not read snapshot {next_id} yet"
    age = _fmt_ms(now_ms - table.snapshot(earliest).time_millis)
    return (
        f"nothing expired: snapshot {earliest} (committed {age} ago) stays until it is older than "
        f"{_fmt_ms(retention.time_ms)} ({retention.time_source}); pass --older-than to expire sooner"
    )


def _fmt_ms(ms: int) -> str:
    seconds = ms / 1000
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.1f} s"


def cmd_expire(args: argparse.Namespace) -> Any:
    table = _table(args)
    retention = _retention(args, table)
    _progress(args, f"expiring snapshots of {table.identifier} ...")
    now_ms = int(time.time() * 1000)
    result = table.maintenance.expire_snapshots(
        num_retained_min=retention.min, num_retained_max=retention.max, time_retained_ms=retention.time_ms
    )
    out: dict[str, Any] = {
        "expired_snapshots": list(result.expired_snapshot_ids),
        "deleted_data_files": result.deleted_data_files,
        "deleted_changelog_files": result.deleted_changelog_files,
        "deleted_manifests": result.deleted_manifest_files,
        "expired_tags": list(result.expired_tags),
        "earliest_snapshot": result.earliest_snapshot_id,
    }
    if not result.expired_snapshot_ids:
        out["note"] = _why_nothing_expired(table, retention, now_ms)
    return out


def cmd_create_tag(args: argparse.Namespace) -> Any:
    table = _table(args)
    tag = table.manage.create_tag(args.name, args.snapshot, _duration(args.time_retained) if args.time_retained else None)
    return {"tag": tag.name, "snapshot_id": tag.snapshot_id}


def cmd_delete_tag(args: argparse.Namespace) -> Any:
    _table(args).manage.delete_tag(args.name)
    return {"deleted_tag": args.name}


def cmd_rollback(args: argparse.Namespace) -> Any:
    if (args.snapshot is None) == (args.tag is None):
        raise UsageError("rollback needs exactly one of --snapshot or --tag")
    table = _table(args)
    _progress(args, f"rolling {table.identifier} back to {'tag ' + args.tag if args.tag else 'snapshot ' + str(args.snapshot)} ...")
    snapshot = table.manage.rollback_to(args.snapshot, tag=args.tag)
    return {"latest_snapshot": snapshot.id}


def cmd_expire_partitions(args: argparse.Namespace) -> Any:
    table = _table(args)
    _progress(args, f"dropping partitions of {table.identifier} older than its partition.expiration-time ...")
    return {"dropped_partitions": table.maintenance.expire_partitions()}


def cmd_branches(args: argparse.Namespace) -> Any:
    return [{"branch": name} for name in _table(args).manage.branches()]


def cmd_create_branch(args: argparse.Namespace) -> Any:
    branch = _table(args).manage.create_branch(args.name, tag=args.tag)
    latest = branch.latest_snapshot()
    return {"branch": args.name, "snapshot_id": latest.id if latest else None}


def cmd_delete_branch(args: argparse.Namespace) -> Any:
    _table(args).manage.delete_branch(args.name)
    return {"deleted_branch": args.name}


def cmd_fast_forward(args: argparse.Namespace) -> Any:
    table = _table(args)
    table.manage.fast_forward(args.name)
    latest = table.on_branch("main").latest_snapshot()
    return {"fast_forwarded_to": args.name, "latest_snapshot": latest.id if latest else None}


def cmd_remove_orphans(args: argparse.Namespace) -> Any:
    table = _table(args)
    older = int(time.time() * 1000) - _duration(args.older_than)
    _progress(args, f"looking for orphan files in {table.identifier} older than {_fmt_time(older)} ...")
    result = table.maintenance.remove_orphan_files(older_than_ms=older, dry_run=args.dry_run)
    return {"dry_run": result.dry_run, "files": list(result.deleted), "count": len(result.deleted), "bytes": result.bytes}


def cmd_check(args: argparse.Namespace) -> Any:
    table = _table(args)
    result = table.maintenance.check()
    if not result.ok:
        args.exit_code = EXIT_ERROR
    commits = [
        {"manifest_list": c.manifest_list, "files": len(c.data_files), "rows": c.row_count, "written": _fmt_time(c.modified_ms)}
        for c in result.unreferenced_commits
    ]
    invalid = [{"snapshot": s.snapshot_id, "reason": s.reason} for s in result.invalid_snapshots]
    notes = []
    if result.unreferenced_commits:
        notes.append(
            "commits whose rows no snapshot holds (replaced by another engine's publish, crashed, or still running); "
            "tables shared with Paimon Java on a local file system need the catalog lock (lock.enabled) in both engines"
        )
    if invalid:
        notes.append("snapshots whose metadata the table cannot hold (paths outside it, missing files, unknown schemas)")
    note = "; ".join(notes) or "ok: every commit's files are referenced by a snapshot and every retained snapshot is valid"
    return {"snapshots": result.snapshots, "unreferenced_commits": commits, "invalid_snapshots": invalid, "note": note}


# -- parser ------------------------------------------------------------------------------------
def _global_options(parser: argparse.ArgumentParser, *, defaults: bool) -> None:
    """-w/--json/-q, accepted before and after the command. The command's copies default to
    SUPPRESS so that they do not overwrite a value given before the command."""

    def default(value: Any) -> Any:
        return value if defaults else argparse.SUPPRESS

    parser.add_argument(
        "-w",
        "--warehouse",
        default=default(os.environ.get("LAKESTORE_WAREHOUSE")),
        help="warehouse directory (default: $LAKESTORE_WAREHOUSE)",
    )
    parser.add_argument(
        "-o",
        "--catalog-option",
        action="append",
        metavar="KEY=VALUE",
        default=default(None),
        help="catalog option, repeatable: -o metastore=jdbc -o uri=jdbc:postgresql://host/db -o jdbc.user=u",
    )
    parser.add_argument("--json", action="store_true", default=default(False), help="print one JSON document instead of a table")
    parser.add_argument("-q", "--quiet", action="store_true", default=default(False), help="no progress messages on stderr")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lakestore", description="Inspect and maintain lakestore (Apache Paimon) tables.")
    _global_options(parser, defaults=True)
    common = argparse.ArgumentParser(add_help=False)
    _global_options(common, defaults=False)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, func: Any, help_text: str, *, table: bool = True) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text, parents=[common])
        if table:
            p.add_argument("table", help="database.table")
        p.set_defaults(func=func)
        return p

    add("databases", cmd_databases, "list databases", table=False)
    p = add("tables", cmd_tables, "list tables", table=False)
    p.add_argument("database", nargs="?")
    p = add("describe", cmd_describe, "schema, keys and options of a table (at a snapshot or tag)")
    p.add_argument("--snapshot", type=int)
    p.add_argument("--tag")
    add("snapshots", cmd_snapshots, "retained snapshots")
    p = add("files", cmd_files, "live files per partition, bucket and level (the LSM shape)")
    p.add_argument("--snapshot", type=int)
    p.add_argument("--tag")
    p = add("index-files", cmd_index_files, "index files per partition and bucket: key hashes of dynamic buckets, deletion vectors")
    p.add_argument("--snapshot", type=int)
    p.add_argument("--tag")
    add("tags", cmd_tags, "tags")
    p = add("inspect", cmd_inspect, "one of Paimon's system tables of the table (as db.t$<system> reads it)")
    p.add_argument("system", choices=sorted(SYSTEM_TABLES), help="the system table")
    p.add_argument("--snapshot", type=int, help="files, manifests, partitions, table_indexes, statistics, audit_log, binlog")
    p.add_argument("--tag")
    p = add("compact", cmd_compact, "compact the table")
    p.add_argument("--full", action="store_true")
    p.add_argument("--partition", action="append", help="k=v[,k2=v2]; repeatable")
    p = add("expire", cmd_expire, "expire snapshots (says why when none expired)")
    p.add_argument("--retain-min", type=int, help="keep at least this many (default: the table's snapshot.num-retained.min)")
    p.add_argument("--retain-max", type=int, help="keep at most this many (default: the table's snapshot.num-retained.max)")
    p.add_argument(
        "--older-than", help="expire only snapshots replaced longer ago than this, e.g. '1 h', '30 min' (default: snapshot.time-retained)"
    )
    p = add("create-tag", cmd_create_tag, "tag a snapshot")
    p.add_argument("name")
    p.add_argument("--snapshot", type=int)
    p.add_argument("--time-retained")
    add("expire-partitions", cmd_expire_partitions, "drop partitions older than the table's partition.expiration-time")
    add("branches", cmd_branches, "branches other than main (address one as db.t$branch_<name>)")
    p = add("create-branch", cmd_create_branch, "create a branch from a tag, or empty")
    p.add_argument("name")
    p.add_argument("--tag")
    p = add("delete-branch", cmd_delete_branch, "delete a branch")
    p.add_argument("name")
    p = add("fast-forward", cmd_fast_forward, "make main equal to a branch")
    p.add_argument("name")
    p = add("delete-tag", cmd_delete_tag, "delete a tag")
    p.add_argument("name")
    p = add("rollback", cmd_rollback, "roll the table back to a snapshot or tag")
    p.add_argument("--snapshot", type=int)
    p.add_argument("--tag")
    add("check", cmd_check, "find commits whose rows no snapshot holds (exit 1 when any)")
    p = add("remove-orphans", cmd_remove_orphans, "delete files nothing references")
    p.add_argument("--older-than", default="1 d", help="only files older than this (default '1 d')")
    p.add_argument("--dry-run", action="store_true")
    return parser


def _print(args: argparse.Namespace, result: Any) -> None:
    if args.json:
        print(json.dumps(result, default=str))
    elif isinstance(result, list):
        print(_render_table(result))
    elif isinstance(result, dict) and "fields" in result:  # describe
        head = {k: v for k, v in result.items() if k not in ("fields", "options")}
        print("\n".join(f"{k}: {v}" for k, v in head.items()))
        print()
        print(_render_table(result["fields"]))
        print()
        print(_render_table([{"option": k, "value": v} for k, v in sorted(result["options"].items())]))
    elif isinstance(result, dict) and "files" in result and isinstance(result["files"], list):
        print("\n".join(result["files"]) if result["files"] else "(no orphan files)")
        print(f"{'would delete' if result['dry_run'] else 'deleted'} {result['count']} files, {result['bytes']} bytes")
    else:
        note = result.get("note")
        # with a note, empty lists say nothing the note does not say better
        lines = [f"{k}: {v}" for k, v in result.items() if k != "note" and not (note and v == [])]
        print("\n".join([*lines, *([note] if note else [])]))


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["serve"]:  # the REST catalog server (lakestore.rest)
        return serve_main(args_list[1:])
    if args_list[:1] == ["serve-admin"]:
        return admin_main(args_list[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # argparse: 0 for --help, 2 for usage errors
        return int(exc.code or 0)
    if not args.warehouse:
        print("lakestore: error: --warehouse (or $LAKESTORE_WAREHOUSE) is required", file=sys.stderr)
        return EXIT_USAGE
    if not os.path.exists(args.warehouse):
        print(f"lakestore: warehouse {args.warehouse!r} does not exist", file=sys.stderr)
        return EXIT_NOT_FOUND
    if not os.path.isdir(args.warehouse):
        print(f"lakestore: error: warehouse {args.warehouse!r} is not a directory (give the warehouse directory)", file=sys.stderr)
        return EXIT_USAGE
    try:
        result = args.func(args)
    except (UsageError, InvalidIdentifierError) as exc:
        print(f"lakestore: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except _NOT_FOUND as exc:
        print(f"lakestore: not found: {exc}", file=sys.stderr)
        return EXIT_NOT_FOUND
    except (LakestoreError, ValueError) as exc:
        print(f"lakestore: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    _print(args, result)
    return int(getattr(args, "exit_code", EXIT_OK))


if __name__ == "__main__":
    sys.exit(main())
