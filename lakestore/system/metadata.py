"""System tables of a table's metadata files: ``snapshots``, ``schemas``, ``options``, ``tags``,
``branches``, ``consumers`` and ``statistics``, with Paimon 2.0.0's columns (names, order, types
and nullability of its ``SnapshotsTable``, ``SchemasTable``, ...)."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from lakestore.errors import CorruptMetadataError
from lakestore.meta.branch import BRANCH_DIR, BRANCH_PREFIX
from lakestore.meta.consumer import ConsumerManager
from lakestore.meta.tag import Tag, TagReader
from lakestore.system.source import LATEST, TableState, TimeTravel, java_duration, local_millis, naive_millis, table_of

_TS = pa.timestamp("ms")  # Paimon's TIMESTAMP(3): local wall-clock time

SNAPSHOTS = pa.schema(
    [
        pa.field("snapshot_id", pa.int64(), nullable=False),
        pa.field("schema_id", pa.int64(), nullable=False),
        pa.field("commit_user", pa.string(), nullable=False),
        pa.field("commit_identifier", pa.int64(), nullable=False),
        pa.field("commit_kind", pa.string(), nullable=False),
        pa.field("commit_time", _TS, nullable=False),
        pa.field("base_manifest_list", pa.string(), nullable=False),
        pa.field("delta_manifest_list", pa.string(), nullable=False),
        pa.field("changelog_manifest_list", pa.string()),
        pa.field("total_record_count", pa.int64()),
        pa.field("delta_record_count", pa.int64()),
        pa.field("changelog_record_count", pa.int64()),
        pa.field("watermark", pa.int64()),
        pa.field("next_row_id", pa.int64()),
        pa.field("operation", pa.string()),
    ]
)
SCHEMAS = pa.schema(
    [
        pa.field("schema_id", pa.int64(), nullable=False),
        pa.field("fields", pa.string(), nullable=False),
        pa.field("partition_keys", pa.string(), nullable=False),
        pa.field("primary_keys", pa.string(), nullable=False),
        pa.field("options", pa.string(), nullable=False),
        pa.field("comment", pa.string()),
        pa.field("update_time", _TS, nullable=False),
    ]
)
OPTIONS = pa.schema([pa.field("key", pa.string(), nullable=False), pa.field("value", pa.string(), nullable=False)])
TAGS = pa.schema(
    [
        pa.field("tag_name", pa.string(), nullable=False),
        pa.field("snapshot_id", pa.int64(), nullable=False),
        pa.field("schema_id", pa.int64(), nullable=False),
        pa.field("commit_time", _TS, nullable=False),
        pa.field("record_count", pa.int64()),
        pa.field("create_time", _TS),
        pa.field("time_retained", pa.string()),
    ]
)
BRANCHES = pa.schema([pa.field("branch_name", pa.string(), nullable=False), pa.field("create_time", _TS, nullable=False)])
CONSUMERS = pa.schema([pa.field("consumer_id", pa.string(), nullable=False), pa.field("next_snapshot_id", pa.int64(), nullable=False)])
AGGREGATION_FIELDS = pa.schema(
    [
        pa.field("field_name", pa.string(), nullable=False),
        pa.field("field_type", pa.string(), nullable=False),
        pa.field("function", pa.string()),
        pa.field("function_options", pa.string()),
        pa.field("comment", pa.string()),
    ]
)
STATISTICS = pa.schema(
    [
        pa.field("snapshot_id", pa.int64(), nullable=False),
        pa.field("schema_id", pa.int64(), nullable=False),
        pa.field("mergedRecordCount", pa.int64()),
        pa.field("mergedRecordSize", pa.int64()),
        pa.field("colstat", pa.string()),
    ]
)


def _flat_json(value: Any) -> str:
    """Paimon's ``JsonSerdeUtil.toFlatJson``: compact JSON."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _pretty_json(value: Any, indent: int = 0) -> str:
    """Jackson's default pretty printer (Paimon's ``JsonSerdeUtil.toJson``): two-space indents,
    ``"key" : value``, empty containers as ``{ }`` / ``[ ]``."""
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(value, dict):
        if not value:
            return "{ }"
        items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)} : {_pretty_json(v, indent + 2)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(_pretty_json(v, indent) for v in value) + " ]"
    return json.dumps(value, ensure_ascii=False)


def snapshots(state: TableState) -> pa.Table:
    """Every retained snapshot of the branch, by id."""
    rows = list(state.store.snapshot_manager.snapshots())
    return table_of(
        SNAPSHOTS,
        {
            "snapshot_id": [s.id for s in rows],
            "schema_id": [s.schema_id for s in rows],
            "commit_user": [s.commit_user for s in rows],
            "commit_identifier": [s.commit_identifier for s in rows],
            "commit_kind": [s.commit_kind for s in rows],
            "commit_time": [local_millis(s.time_millis) for s in rows],
            "base_manifest_list": [s.base_manifest_list for s in rows],
            "delta_manifest_list": [s.delta_manifest_list for s in rows],
            "changelog_manifest_list": [s.changelog_manifest_list for s in rows],
            "total_record_count": [s.total_record_count for s in rows],
            "delta_record_count": [s.delta_record_count for s in rows],
            "changelog_record_count": [s.changelog_record_count for s in rows],
            "watermark": [s.watermark for s in rows],
            "next_row_id": [s.next_row_id for s in rows],
            "operation": [s.operation for s in rows],
        },
    )


def schemas(state: TableState) -> pa.Table:
    """Every schema version of the branch, by id, each part as compact JSON."""
    docs = []
    for schema_id in state.store.schema_manager.list_ids():
        path = state.store.schema_manager.path(schema_id)
        try:
            doc = json.loads(state.store.file_io.read_bytes(path))
        except FileNotFoundError:  # removed since listed
            continue
        except ValueError as exc:
            raise CorruptMetadataError(path, f"invalid JSON: {exc}") from exc
        if not isinstance(doc, dict):
            raise CorruptMetadataError(path, "schema is not a JSON object")
        docs.append(doc)
    return table_of(
        SCHEMAS,
        {
            "schema_id": [d["id"] for d in docs],
            "fields": [_flat_json(d.get("fields", [])) for d in docs],
            "partition_keys": [_flat_json(d.get("partitionKeys", [])) for d in docs],
            "primary_keys": [_flat_json(d.get("primaryKeys", [])) for d in docs],
            "options": [_flat_json(d.get("options", {})) for d in docs],
            "comment": [d.get("comment") for d in docs],
            "update_time": [local_millis(d.get("timeMillis", 0)) for d in docs],
        },
    )


def options(state: TableState) -> pa.Table:
    """The table's options (the latest schema's), by key."""
    items = sorted(state.store.schema.options.items())
    return table_of(OPTIONS, {"key": [k for k, _ in items], "value": [v for _, v in items]})


def aggregation_fields(state: TableState) -> pa.Table:
    """Per column of the latest schema: its type and its ``fields.<column>.*`` options (values
    as ``function``, keys as ``function_options``, each a Java list: ``[sum]``), by key."""
    options = sorted(state.store.schema.options.items())
    out: dict[str, list[Any]] = {name: [] for name in AGGREGATION_FIELDS.names}
    for field in state.store.schema.fields:
        mine = [(k, v) for k, v in options if len(k.split(".")) > 2 and k.split(".")[0] == "fields" and k.split(".")[1] == field.name]
        out["field_name"].append(field.name)
        out["field_type"].append(field.type.to_paimon() if isinstance(field.type.to_paimon(), str) else json.dumps(field.type.to_paimon()))
        out["function"].append("[" + ", ".join(v for _, v in mine) + "]")
        out["function_options"].append("[" + ", ".join(k for k, _ in mine) + "]")
        out["comment"].append(field.description)
    return table_of(AGGREGATION_FIELDS, out)


def tag_list(state: TableState) -> list[Tag]:
    """The branch's tags, by name."""
    return sorted(TagReader(state.store.file_io, state.store.metadata_path).tags(), key=lambda t: t.name)


def tags(state: TableState) -> pa.Table:
    """Every tag of the branch, by name."""
    rows = tag_list(state)
    return table_of(
        TAGS,
        {
            "tag_name": [t.name for t in rows],
            "snapshot_id": [t.snapshot.id for t in rows],
            "schema_id": [t.snapshot.schema_id for t in rows],
            "commit_time": [local_millis(t.snapshot.time_millis) for t in rows],
            "record_count": [t.snapshot.total_record_count for t in rows],
            "create_time": [naive_millis(t.create_time) for t in rows],
            "time_retained": [None if t.time_retained_ms is None else java_duration(t.time_retained_ms) for t in rows],
        },
    )


def branches(state: TableState) -> pa.Table:
    """The table's branches other than ``main``, by name, created when their directory was."""
    statuses = [s for s in state.store.file_io.list_status(f"{state.store.path}/{BRANCH_DIR}") if s.is_dir]
    rows = sorted((s.path.rstrip("/").rsplit("/", 1)[-1], s.mtime_ms) for s in statuses)
    rows = [(name[len(BRANCH_PREFIX) :], mtime) for name, mtime in rows if name.startswith(BRANCH_PREFIX)]
    return table_of(BRANCHES, {"branch_name": [n for n, _ in rows], "create_time": [local_millis(m) for _, m in rows]})


def consumers(state: TableState) -> pa.Table:
    """The branch's consumers and the next snapshot each will read, by id."""
    items = sorted(ConsumerManager(state.store.file_io, state.store.metadata_path).consumers().items())
    return table_of(CONSUMERS, {"consumer_id": [k for k, _ in items], "next_snapshot_id": [v for _, v in items]})


def statistics(state: TableState, travel: TimeTravel = LATEST) -> pa.Table:
    """The statistics file of the snapshot read (Paimon's ``ANALYZE`` output), if it has one."""
    snapshot = state.resolve(travel)
    if snapshot is None or not snapshot.statistics:
        return STATISTICS.empty_table()
    path = f"{state.store.path}/statistics/{snapshot.statistics}"
    try:
        doc = json.loads(state.store.file_io.read_bytes(path))
    except FileNotFoundError as exc:
        raise CorruptMetadataError(path, "statistics file is missing") from exc
    except ValueError as exc:
        raise CorruptMetadataError(path, f"invalid JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise CorruptMetadataError(path, "statistics is not a JSON object")
    return table_of(
        STATISTICS,
        {
            "snapshot_id": [doc.get("snapshotId", snapshot.id)],
            "schema_id": [doc.get("schemaId", snapshot.schema_id)],
            "mergedRecordCount": [doc.get("mergedRecordCount")],
            "mergedRecordSize": [doc.get("mergedRecordSize")],
            "colstat": [_pretty_json(doc.get("colStats", {}))],
        },
    )
