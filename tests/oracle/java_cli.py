"""Apache Paimon 0.9's Java core as a test oracle, served over stdin/stdout.

Runs in the ``.venv-java`` virtual environment (pypaimon 0.2.0, whose py4j bridge jar carries
Paimon's Java core) and never imports lakestore. One JVM serves a whole test session: each
request is one JSON line on stdin; each response is one line on stdout starting with
``RESPONSE_PREFIX`` (anything else the JVM prints is noise). Tables go in and out as Arrow IPC
files. Started by ``tests/oracle/java_driver.py``.
"""

from __future__ import annotations

import json
import sys
import tempfile
import traceback
from typing import Any

import pyarrow as pa
from pypaimon import Schema
from pypaimon.py4j import Catalog
from pypaimon.py4j.java_gateway import get_gateway
from pypaimon.py4j.java_implementation import BatchTableWrite, ReadBuilder

RESPONSE_PREFIX = "@@java-oracle@@ "
_catalogs: dict[str, Any] = {}


def _jvm() -> Any:
    return get_gateway().jvm


def _catalog(warehouse: str) -> Any:
    if warehouse not in _catalogs:
        _catalogs[warehouse] = Catalog.create({"warehouse": warehouse})
    return _catalogs[warehouse]


def _java_map(values: dict[str, str]) -> Any:
    java_map = _jvm().java.util.HashMap()
    for key, value in values.items():
        java_map.put(key, str(value))
    return java_map


def _j_table(req: dict[str, Any]) -> Any:
    table = _catalog(req["warehouse"]).get_table(req["identifier"])
    j_table = table._j_table
    if req.get("options"):
        j_table = j_table.copy(_java_map(req["options"]))
    return table, j_table


def _read_ipc(path: str) -> pa.Table:
    with pa.memory_map(path) as source:
        return pa.ipc.open_file(source).read_all()


def _write_ipc(table: pa.Table, path: str) -> None:
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def create_table(req: dict[str, Any]) -> dict[str, Any]:
    catalog = _catalog(req["warehouse"])
    catalog.create_database(req["identifier"].split(".")[0], True)
    schema = _read_ipc(req["schema_path"]).schema
    catalog.create_table(
        req["identifier"],
        Schema(
            schema,
            partition_keys=req.get("partition_keys") or None,
            primary_keys=req.get("primary_keys") or None,
            options=req.get("table_options") or {},
        ),
        True,
    )
    return {}


def write(req: dict[str, Any]) -> dict[str, Any]:
    table, j_table = _j_table(req)
    jvm = _jvm()
    builder = jvm.InvocationUtil.getBatchWriteBuilder(j_table)
    if req.get("overwrite") is not None:
        builder = builder.withOverwrite(_java_map(req["overwrite"]))
    j_write = builder.newWrite().withIOManager(jvm.org.apache.paimon.disk.IOManager.create(tempfile.mkdtemp(prefix="java-oracle-io-")))
    data = _read_ipc(req["data_path"])
    if str(j_table.bucketMode().toString()) == "HASH_DYNAMIC":
        # Paimon's batch row writer cannot pick dynamic buckets: assign them as its Flink and
        # Spark sinks do (HashBucketAssigner over the index) and write row by row.
        _write_dynamic(j_table, j_write, data, int(req.get("assigners") or 1))
        commit = builder.newCommit()
        commit.commit(j_write.prepareCommit())
        commit.close()
        j_write.close()
        return {"snapshot_id": _latest_snapshot_id(j_table)}
    writer = BatchTableWrite(j_write, builder.rowType())
    if data.num_rows:
        writer.write_arrow(data.select(list(writer._arrow_schema.names)).cast(writer._arrow_schema))
    messages = writer.prepare_commit()
    commit = builder.newCommit()
    commit.commit([m.to_j_commit_message() for m in messages])
    commit.close()
    writer.close()
    return {"snapshot_id": _latest_snapshot_id(j_table)}


def _write_dynamic(j_table: Any, j_write: Any, data: pa.Table, assigners: int) -> None:
    """``assigners`` > 1: as a parallel Flink/Spark job, each key goes to the assigner
    ``BucketAssigner.computeAssigner`` picks, which owns the buckets ``b % assigners == id``."""
    jvm = _jvm()
    index = jvm.org.apache.paimon.index
    target = j_table.coreOptions().dynamicBucketTargetRowNum()
    handler = j_table.store().newIndexFileHandler()
    by_id = [
        index.HashBucketAssigner(j_table.snapshotManager(), "java-oracle", handler, assigners, assigners, i, target)
        for i in range(assigners)
    ]
    extractor = jvm.org.apache.paimon.table.sink.RowPartitionKeyExtractor(j_table.schema())
    fields = [(f.name(), str(f.type().getTypeRoot().toString())) for f in j_table.rowType().getFields()]
    for record in data.select([name for name, _ in fields]).to_pylist():
        row = _binary_row(jvm, fields, record)
        partition, key_hash = extractor.partition(row), extractor.trimmedPrimaryKey(row).hashCode()
        owner = index.BucketAssigner.computeAssigner(partition.hashCode(), key_hash, assigners, assigners)
        j_write.write(row, by_id[owner].assign(partition, key_hash))


def _binary_row(jvm: Any, fields: list[tuple[str, str]], record: dict[str, Any]) -> Any:
    data = jvm.org.apache.paimon.data
    row = data.BinaryRow(len(fields))
    writer = data.BinaryRowWriter(row)
    for i, (name, root) in enumerate(fields):
        value = record[name]
        if value is None:
            writer.setNullAt(i)
        elif root in ("BIGINT",):
            writer.writeLong(i, int(value))
        elif root in ("INTEGER", "DATE"):
            writer.writeInt(i, int(value))
        elif root == "DOUBLE":
            writer.writeDouble(i, float(value))
        elif root in ("VARCHAR", "CHAR"):
            writer.writeString(i, data.BinaryString.fromString(value))
        else:
            raise ValueError(f"the dynamic-bucket oracle writer does not handle {root} columns")
    writer.complete()
    return row


def compact(req: dict[str, Any]) -> dict[str, Any]:
    """Full compaction of every (partition, bucket) the current snapshot holds."""
    table, j_table = _j_table(req)
    jvm = _jvm()
    builder = jvm.InvocationUtil.getBatchWriteBuilder(j_table)
    j_write = builder.newWrite().withIOManager(jvm.org.apache.paimon.disk.IOManager.create(tempfile.mkdtemp(prefix="java-oracle-io-")))
    splits = j_table.newSnapshotReader().read().dataSplits()
    seen = set()
    for split in splits:
        key = (bytes(split.partition().toBytes()), split.bucket())
        if key in seen:
            continue
        seen.add(key)
        j_write.compact(split.partition(), split.bucket(), True)
    messages = j_write.prepareCommit()
    commit = builder.newCommit()
    commit.commit(messages)
    commit.close()
    j_write.close()
    return {"snapshot_id": _latest_snapshot_id(j_table), "buckets": len(seen)}


def read(req: dict[str, Any]) -> dict[str, Any]:
    table, j_table = _j_table(req)
    builder = ReadBuilder(_jvm().InvocationUtil.getReadBuilder(j_table), j_table.rowType(), table._catalog_options)
    if req.get("projection"):
        builder = builder.with_projection(req["projection"])
    splits = builder.new_scan().plan().splits()
    result = builder.new_read().to_arrow(splits)
    if result is None:
        names = [f.name() for f in j_table.rowType().getFields()]
        result = pa.table({n: pa.array([], pa.null()) for n in names})
    _write_ipc(result, req["out_path"])
    return {"rows": result.num_rows}


def _latest_snapshot_id(j_table: Any) -> int | None:
    latest = j_table.snapshotManager().latestSnapshotId()
    return None if latest is None else int(latest)


def snapshots(req: dict[str, Any]) -> dict[str, Any]:
    _, j_table = _j_table(req)
    manager = j_table.snapshotManager()
    earliest, latest = manager.earliestSnapshotId(), manager.latestSnapshotId()
    out = []
    if latest is not None:
        for snapshot_id in range(int(earliest), int(latest) + 1):
            if manager.snapshotExists(snapshot_id):
                s = manager.snapshot(snapshot_id)
                out.append({"id": snapshot_id, "commit_kind": str(s.commitKind().toString()), "schema_id": int(s.schemaId())})
    return {"snapshots": out}


def create_tag(req: dict[str, Any]) -> dict[str, Any]:
    _, j_table = _j_table(req)
    if req.get("snapshot_id") is None:
        j_table.createTag(req["tag"])
    else:
        j_table.createTag(req["tag"], int(req["snapshot_id"]))
    return {}


def delete_tag(req: dict[str, Any]) -> dict[str, Any]:
    _j_table(req)[1].deleteTag(req["tag"])
    return {}


def rollback(req: dict[str, Any]) -> dict[str, Any]:
    _, j_table = _j_table(req)
    if req.get("tag") is not None:
        j_table.rollbackTo(req["tag"])
    else:
        j_table.rollbackTo(int(req["snapshot_id"]))
    return {"snapshot_id": _latest_snapshot_id(j_table)}


def expire(req: dict[str, Any]) -> dict[str, Any]:
    _, j_table = _j_table(req)
    jvm = _jvm()
    config = (
        jvm.org.apache.paimon.options.ExpireConfig.builder()
        .snapshotRetainMin(int(req["retain_min"]))
        .snapshotRetainMax(int(req.get("retain_max") or 2147483647))
        .snapshotTimeRetain(jvm.java.time.Duration.ofMillis(0))
        .build()
    )
    expired = j_table.newExpireSnapshots().config(config).expire()
    return {"expired": int(expired)}


def alter(req: dict[str, Any]) -> dict[str, Any]:
    jvm = _jvm()
    change = jvm.org.apache.paimon.schema.SchemaChange
    types = jvm.org.apache.paimon.types.DataTypes
    changes = jvm.java.util.ArrayList()
    for op in req["changes"]:
        kind = op["op"]
        if kind == "add_column":
            changes.add(change.addColumn(op["name"], getattr(types, op["type"])()))
        elif kind == "drop_column":
            changes.add(change.dropColumn(op["name"]))
        elif kind == "rename_column":
            changes.add(change.renameColumn(op["name"], op["new_name"]))
        elif kind == "set_option":
            changes.add(change.setOption(op["key"], op["value"]))
        else:
            raise ValueError(f"unknown schema change {kind!r}")
    identifier = jvm.org.apache.paimon.catalog.Identifier.fromString(req["identifier"])
    _catalog(req["warehouse"])._j_catalog.alterTable(identifier, changes, False)
    return {}


def create_branch(req: dict[str, Any]) -> dict[str, Any]:
    _, j_table = _j_table(req)
    if req.get("tag"):
        j_table.createBranch(req["branch"], req["tag"])
    else:
        j_table.createBranch(req["branch"])
    return {}


OPERATIONS = {
    f.__name__: f for f in (create_table, write, compact, read, snapshots, create_tag, delete_tag, rollback, expire, alter, create_branch)
}


def main() -> None:
    get_gateway()  # start the JVM before the first request
    print(RESPONSE_PREFIX + json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            result = {"ok": True, **OPERATIONS[req["op"]](req)}
        except Exception as exc:  # every failure goes back to the driver, which raises it
            result = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-6000:]}
        print(RESPONSE_PREFIX + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
