"""The Hive catalog on an object store (moto's S3 server): ``lock.enabled`` is on by default, as
Paimon's, so snapshots publish under the metastore's table lock; ``location-in-properties``
keeps the metastore away from ``s3://`` paths it has no file system for."""

from __future__ import annotations

import json
import uuid

import lakestore
from lakestore.io.hive_lock import HiveCatalogLock
from lakestore.io.s3 import S3FileIO
from tests.hive.test_hive_lock import SCHEMA, _check_commits, _expect, _worker
from tests.hms import Metastore
from tests.io.conftest import S3Server


def test_processes_commit_to_s3_through_the_hive_lock(metastore: Metastore, s3_server: S3Server, bucket: str):
    options = {**metastore.options(**{"location-in-properties": "true", "lock-check-max-sleep": "200 ms"}), **s3_server.options()}
    warehouse = f"s3://{bucket}/wh"
    catalog = lakestore.Catalog(warehouse, options=options)
    assert isinstance(catalog.file_io, S3FileIO) and isinstance(catalog.publisher.lock, HiveCatalogLock)  # on by default for object stores
    db = f"s3_{uuid.uuid4().hex[:10]}"
    catalog.create_database(db)
    table = catalog.create_table(f"{db}.t", schema=SCHEMA)
    assert table.path == f"{warehouse}/{db}.db/t" and table.store.publisher is catalog.publisher  # commits publish under it
    workers, commits = 3, 3
    procs = [_worker("commit", json.dumps(options), warehouse, f"{db}.t", str(w), str(commits)) for w in range(workers)]
    for p in procs:
        _expect(p, "ready")
    for p in procs:
        _, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    _check_commits(metastore, warehouse, f"{db}.t", options, workers, commits)
    catalog.drop_table(f"{db}.t")
    assert not catalog.file_io.exists(f"{table.path}/schema/schema-0")
