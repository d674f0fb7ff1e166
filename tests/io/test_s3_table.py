"""Tables on the S3 server through the real clients: the table lifecycle end to end, a Paimon
reader over the bytes lakestore left on S3, and the safe-by-default refusal to commit."""

from __future__ import annotations

import os
import pickle
import time

import pyarrow as pa
import pytest

import lakestore
from lakestore.io.factory import file_io_for
from lakestore.io.fileio import LocalFileIO
from lakestore.io.s3 import S3FileIO, UnsafePublishError
from tests._support import sort_rows
from tests.test_interop import ALL_TYPES, all_types

# a time after every snapshot of the test session: time retention never protects them
LATER_MS = int(time.time() * 1000) + 86_400_000

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.string())])


def lifecycle(catalog: lakestore.Catalog) -> lakestore.Table:
    """The same operations on any warehouse: PK upserts, overwrite, compaction, tags, expiry,
    schema of every type, rename."""
    catalog.create_database("db", exist_ok=True)
    pk = catalog.create_table("db.pk", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"})
    for version in range(4):
        pk.write_arrow(pa.table({"dt": ["a", "b"] * 5, "id": list(range(10)), "v": [f"v{version}-{i}" for i in range(10)]}, schema=SCHEMA))
    pk.write_arrow(pa.table({"dt": ["b"], "id": [1], "v": ["new"]}, schema=SCHEMA), overwrite={"dt": "b"})
    pk.compact(full=True)
    pk.manage.create_tag("t1")
    typed = catalog.create_table("db.types", schema=ALL_TYPES, options={"bucket": "-1"})
    typed.write_arrow(all_types(range(1, 40)))
    catalog.rename_table("db.types", "db.types2")
    return pk


def test_lifecycle_on_s3_matches_local(s3_server, bucket, tmp_path):
    options = s3_server.options(**{"s3.conditional-create": "true"})
    s3_catalog = lakestore.Catalog(f"s3://{bucket}/wh", options=options)
    local_catalog = lakestore.Catalog(str(tmp_path / "wh"))
    assert isinstance(s3_catalog.file_io, S3FileIO) and isinstance(local_catalog.file_io, LocalFileIO)
    on_s3, local = lifecycle(s3_catalog), lifecycle(local_catalog)

    assert sort_rows(on_s3.to_arrow()) == sort_rows(local.to_arrow())
    assert [(s.id, s.commit_kind) for s in on_s3.snapshots()] == [(s.id, s.commit_kind) for s in local.snapshots()]
    assert sort_rows(on_s3.to_arrow(snapshot_id=2)) == sort_rows(local.to_arrow(snapshot_id=2))
    assert s3_catalog.list_tables("db") == ["pk", "types2"]
    assert sort_rows(s3_catalog.get_table("db.types2").to_arrow(), ["id"]) == sort_rows(all_types(range(1, 40)), ["id"])
    # a fresh process view from the path alone, configured by options (what Spark executors do)
    reopened = lakestore.Table.from_path(on_s3.path, options=options)
    assert sort_rows(reopened.to_arrow()) == sort_rows(local.to_arrow())
    # and from a pickled FileIO
    clone = pickle.loads(pickle.dumps(on_s3.store.file_io))
    assert sort_rows(lakestore.Table.from_path(on_s3.path, file_io=clone).to_arrow()) == sort_rows(local.to_arrow())

    on_s3.maintenance.expire_snapshots(num_retained_min=1, num_retained_max=1, time_retained_ms=0, now_ms=LATER_MS)
    local.maintenance.expire_snapshots(num_retained_min=1, num_retained_max=1, time_retained_ms=0, now_ms=LATER_MS)
    assert [s.id for s in on_s3.snapshots()] == [s.id for s in local.snapshots()]
    assert sort_rows(on_s3.to_arrow()) == sort_rows(local.to_arrow())
    assert sort_rows(on_s3.to_arrow(snapshot_id=on_s3.snapshots()[0].id)) == sort_rows(local.to_arrow())
    s3_catalog.drop_table("db.pk")
    assert s3_catalog.list_tables("db") == ["types2"]
    assert not s3_catalog.file_io.list_status(f"s3://{bucket}/wh/db.db/pk")


@pytest.mark.oracle
def test_pypaimon_reads_the_bytes_lakestore_wrote_on_s3(s3_server, bucket, tmp_path):
    from tests.oracle.driver import oracle_available, oracle_read

    if not oracle_available():
        pytest.skip("oracle venv not available")
    catalog = lakestore.Catalog(f"s3://{bucket}/wh", options=s3_server.options(**{"s3.conditional-create": "true"}))
    table = lifecycle(catalog)
    # mirror the objects byte for byte and let pypaimon read the copy
    client = s3_server.client()
    mirror = tmp_path / "mirror"
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="wh/db.db/pk/"):
        for obj in page.get("Contents", []):
            if obj["Key"].endswith("/"):
                continue
            target = mirror / obj["Key"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(client.get_object(Bucket=bucket, Key=obj["Key"])["Body"].read())
    got = oracle_read(mirror / "wh" / "db.db" / "pk")
    assert sort_rows(got) == sort_rows(table.to_arrow())


def test_commit_on_s3_without_lock_or_conditional_create_is_refused(s3_server, bucket):
    catalog = lakestore.Catalog(f"s3://{bucket}/wh", options=s3_server.options())
    catalog.create_database("db")
    with pytest.raises(UnsafePublishError) as err:
        catalog.create_table("db.t", schema=SCHEMA)
    message = str(err.value)
    assert "lock.enabled" in message and "uri" in message and "s3.conditional-create" in message
    # a table created by a safely configured catalog: reads work, commits are still refused
    safe = lakestore.Catalog(f"s3://{bucket}/wh", options=s3_server.options(**{"s3.conditional-create": "true"}))
    safe.create_table("db.t", schema=SCHEMA).write_arrow(pa.table({"dt": ["a"], "id": [1], "v": ["x"]}, schema=SCHEMA))
    unsafe_table = catalog.get_table("db.t")
    assert unsafe_table.to_arrow().num_rows == 1
    with pytest.raises(UnsafePublishError, match="lock.enabled"):
        unsafe_table.write_arrow(pa.table({"dt": ["a"], "id": [2], "v": ["y"]}, schema=SCHEMA))
    assert [s.id for s in unsafe_table.snapshots()] == [1]


def test_fileio_primitives(s3_server, bucket):
    fio = file_io_for(f"s3://{bucket}", s3_server.options(**{"s3.conditional-create": "true"}))
    base = f"s3://{bucket}/x"
    assert fio.try_publish(f"{base}/snapshot/snapshot-1", b"one")
    assert not fio.try_publish(f"{base}/snapshot/snapshot-1", b"two")
    assert fio.read_bytes(f"{base}/snapshot/snapshot-1") == b"one"
    with pytest.raises(FileExistsError):
        fio.write_bytes(f"{base}/snapshot/snapshot-1", b"three", overwrite=False)
    fio.write_bytes(f"{base}/snapshot/LATEST", b"1")
    fio.write_bytes(f"{base}/snapshot/LATEST", b"2")
    assert fio.read_bytes(f"{base}/snapshot/LATEST") == b"2"
    assert sorted(fio.list_names(f"{base}/snapshot")) == ["LATEST", "snapshot-1"]
    assert fio.file_size(f"{base}/snapshot/snapshot-1") == 3
    with pytest.raises(FileNotFoundError):
        fio.read_bytes(f"{base}/nothing")
    assert fio.list_status(f"{base}/nothing") == []
    # a failed streamed write leaves no object behind
    with pytest.raises(RuntimeError), fio.open_output(f"{base}/data/part.parquet") as sink:
        sink.write(b"partial")
        raise RuntimeError("writer failed")
    assert not fio.exists(f"{base}/data/part.parquet")
    fio.delete(f"{base}/snapshot/snapshot-1")
    fio.delete(f"{base}/snapshot/snapshot-1")  # idempotent
    assert fio.rename(f"{base}/snapshot", f"{base}/moved") and fio.list_names(f"{base}/moved") == ["LATEST"]
    assert not fio.rename(f"{base}/moved", f"{base}/moved")
    fio.delete_dir(f"{base}/moved")
    assert not fio.exists(f"{base}/moved")
    # under a lock held by the caller: the conditional put, or without conditional writes an
    # absence check and a put; try_publish without conditional writes refuses instead
    assert fio.try_publish_under_lock(f"{base}/tag/tag-a", b"a") and not fio.try_publish_under_lock(f"{base}/tag/tag-a", b"b")
    plain = file_io_for(f"s3://{bucket}", s3_server.options())
    assert plain.try_publish_under_lock(f"{base}/tag/tag-b", b"b") and not plain.try_publish_under_lock(f"{base}/tag/tag-b", b"c")
    assert plain.read_bytes(f"{base}/tag/tag-a") == b"a" and plain.read_bytes(f"{base}/tag/tag-b") == b"b"
    with pytest.raises(UnsafePublishError):
        plain.try_publish(f"{base}/tag/tag-c", b"c")
    assert not plain.exists(f"{base}/tag/tag-c")
    plain.write_bytes(f"{base}/index/index-1", b"i", overwrite=False)  # a fresh unique name needs no lock
    with pytest.raises(FileExistsError):
        plain.write_bytes(f"{base}/index/index-1", b"j", overwrite=False)
    assert plain.read_bytes(f"{base}/index/index-1") == b"i"


def test_configuration_from_environment(s3_server, bucket, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint)
    options = s3_server.options()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", options["s3.access-key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", options["s3.secret-key"])
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    fio = file_io_for(f"s3://{bucket}/wh", {"s3.conditional-create": "true"})
    assert fio.config.endpoint == s3_server.endpoint and fio.config.path_style
    fio.write_bytes(f"s3://{bucket}/env/probe", b"ok")
    assert fio.read_bytes(f"s3://{bucket}/env/probe") == b"ok"
    assert "secret" not in repr(fio) and os.environ["AWS_SECRET_ACCESS_KEY"] not in repr(fio.config)
