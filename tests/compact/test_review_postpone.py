"""A postpone compaction that fails part-way leaves none of its files behind."""

from __future__ import annotations

import glob
import os

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import CommitConflictError
from lakestore.meta.file_scan import live_entries

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])


def test_failed_postpone_compaction_deletes_the_files_of_every_partition(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    t = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "-2"})
    t.write_arrow(pa.table({"dt": ["a", "a", "b", "b"], "id": [1, 2, 1, 2], "v": [1, 2, 3, 4]}, schema=SCHEMA))
    entries = live_entries(t.store.manifests(), t.latest_snapshot())
    # the partition compacted last loses its postponed file (a concurrent compaction took it)
    last = entries[-1]
    assert last.bucket == -2
    assert len({e.partition for e in entries}) == 2
    (path,) = glob.glob(f"{t.path}/*/bucket-postpone/{last.file.file_name}")
    os.remove(path)
    before = _files(t)
    with pytest.raises(CommitConflictError):
        t.compact()
    assert _files(t) - before == set()


def _files(t: lakestore.Table) -> set[str]:
    return {p for p in glob.glob(f"{t.path}/**/*", recursive=True) if os.path.isfile(p)}
