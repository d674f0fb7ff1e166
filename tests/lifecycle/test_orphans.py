from __future__ import annotations

import os
import time

from tests.lifecycle.conftest import SCHEMA, batch, rows

FUTURE = 4_102_444_800_000


def test_orphans_older_than_threshold_only(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "1"})
    t.write_arrow(batch("a", [1, 2], 1.0))
    bucket = f"{t.path}/dt=a/bucket-0"
    stray = [
        f"{bucket}/data-orphan-0.parquet",
        f"{t.path}/manifest/manifest-orphan-0",
        f"{bucket}/.data-x.parquet.abc.tmp",
        f"{t.path}/dt=zz/bucket-3/data-y-0.parquet",
    ]
    for path in stray:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "wb").write(b"junk")
    old = time.time() - 3 * 86400
    for path in stray[:3] + [stray[3]]:
        os.utime(path, (old, old))
    young = f"{bucket}/data-inflight-0.parquet"
    open(young, "wb").write(b"in flight")
    schema_files = sorted(os.listdir(f"{t.path}/schema"))
    dry = t.maintenance.remove_orphan_files(dry_run=True)
    assert sorted(dry.deleted) == sorted(os.path.relpath(p, t.path) for p in stray)
    assert all(os.path.exists(p) for p in stray)
    done = t.maintenance.remove_orphan_files()  # default threshold: one day ago
    assert sorted(done.deleted) == sorted(dry.deleted) and done.bytes == 16
    assert not any(os.path.exists(p) for p in stray)
    assert not os.path.exists(f"{t.path}/dt=zz")  # empty partition directory removed
    assert os.path.exists(young)
    assert sorted(os.listdir(f"{t.path}/schema")) == schema_files
    assert rows(t.to_arrow()) == [("a", 1, 1.0), ("a", 2, 1.0)]
    assert t.maintenance.remove_orphan_files(older_than_ms=FUTURE).deleted == ("dt=a/bucket-0/data-inflight-0.parquet",)
