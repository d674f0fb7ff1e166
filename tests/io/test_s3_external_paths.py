"""``data-file.external-paths`` on object storage (moto's S3 server): a table on S3 whose data
files live under another S3 prefix, and a local table whose data files live on S3 (the S3
FileIO then comes from the environment, as the table's own options hold no credentials)."""

from __future__ import annotations

import time

import pyarrow as pa

import lakestore
from lakestore.meta.file_scan import live_entries
from tests._support import sort_rows

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])
LATER_MS = int(time.time() * 1000) + 86_400_000


def _batch(ids, value: float) -> pa.Table:
    ids = list(ids)
    return pa.table({"dt": ["a"] * len(ids), "id": ids, "v": [value] * len(ids)}, schema=SCHEMA)


def _keys(client, bucket: str, prefix: str) -> set[str]:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return {o["Key"] for page in pages for o in page.get("Contents", []) if not o["Key"].endswith("/")}  # no directory markers


def _exercise(t: lakestore.Table) -> pa.Table:
    t.write_arrow(_batch(range(10), 1.0))
    t.write_arrow(_batch(range(5), 2.0))
    expected = t.to_arrow()
    t.compact(full=True)
    assert sort_rows(t.to_arrow()) == sort_rows(expected)
    t.maintenance.expire_snapshots(num_retained_min=1, num_retained_max=1, time_retained_ms=0, now_ms=LATER_MS)
    assert t.maintenance.remove_orphan_files(older_than_ms=LATER_MS).deleted == ()
    assert sort_rows(t.to_arrow()) == sort_rows(expected)
    return expected


def test_s3_table_with_data_under_another_prefix(s3_server, bucket):
    options = s3_server.options(**{"s3.conditional-create": "true"})
    catalog = lakestore.Catalog(f"s3://{bucket}/wh", options=options)
    catalog.create_database("db")
    t = catalog.create_table(
        "db.t",
        schema=SCHEMA,
        partition_keys=["dt"],
        primary_keys=["dt", "id"],
        options={"bucket": "1", "data-file.external-paths": f"s3://{bucket}/ext", "data-file.external-paths.strategy": "round-robin"},
    )
    _exercise(t)
    client = s3_server.client()
    live = {e.file.external_path for e in live_entries(t.store.manifests(), t.latest_snapshot())}
    assert live and all(p.startswith(f"s3://{bucket}/ext/dt=a/bucket-0/data-") for p in live)
    assert {f"s3://{bucket}/{k}" for k in _keys(client, bucket, "ext/")} == live  # expired ones removed
    assert not [k for k in _keys(client, bucket, "wh/db.db/t/") if k.endswith(".parquet")]


def test_local_table_with_data_on_s3(s3_server, bucket, tmp_path, monkeypatch):
    options = s3_server.options()
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", options["s3.access-key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", options["s3.secret-key"])
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    t = catalog.create_table(
        "db.t",
        schema=SCHEMA,
        partition_keys=["dt"],
        primary_keys=["dt", "id"],
        options={
            "bucket": "1",
            "data-file.external-paths": f"s3://{bucket}/ext-{tmp_path.name}",
            "data-file.external-paths.strategy": "specific-fs",
            "data-file.external-paths.specific-fs": "s3",
        },
    )
    _exercise(t)
    live = {e.file.external_path for e in live_entries(t.store.manifests(), t.latest_snapshot())}
    assert {f"s3://{bucket}/{k}" for k in _keys(s3_server.client(), bucket, f"ext-{tmp_path.name}/")} == live
