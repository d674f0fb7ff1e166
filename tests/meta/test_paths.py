"""lakestore/meta/paths.py: how Paimon 2.0 lays out and names data files (URI spelling, entropy
directories, bucket directories, extensions), and what a snapshot written by lakestore holds
(Paimon 2.0's fields, what is carried from the parent and what is not)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from lakestore.meta.options import CoreOptions
from lakestore.meta.paths import TablePaths, entropy_dirs, murmur3_32, normalize_uri
from lakestore.meta.snapshot import Snapshot
from tests.oracle.driver import oracle_available, oracle_python, oracle_read, oracle_snapshot
from tests.oracle.java_driver import java_unavailable_reason

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.float64())])


@pytest.mark.parametrize(
    ("given", "spelled"),
    [
        ("file:///tmp/x", "file:/tmp/x"),
        ("file:///tmp/x/", "file:/tmp/x"),
        ("file:/tmp//x", "file:/tmp/x"),
        ("s3://bucket/a//b/", "s3://bucket/a/b"),
        ("s3://bucket", "s3://bucket"),
        ("/plain//path/", "/plain/path"),
    ],
)
def test_uris_are_spelled_as_paimons_path_prints_them(given, spelled):
    assert normalize_uri(given) == spelled


def test_murmur3_is_guavas():
    # reference values of MurmurHash3_x86_32 with seed 0 (Guava's Hashing.murmur3_32)
    assert murmur3_32(b"") == 0
    assert murmur3_32(b"hello") == 613153351
    assert murmur3_32(b"The quick brown fox jumps over the lazy dog") == 0x2E4FF723


NAMES = ["data-5b1b9a8c-6a44-4c1d-9bd4-1f0f8f1b3a77-0.parquet", "d-x-12.zst.parquet", "changelog-ab-3.parquet", "é-unicode.parquet"]


@pytest.mark.skipif(not oracle_available(), reason="oracle venv not available")
def test_entropy_directories_match_pypaimon():
    script = (
        "import json,sys\n"
        "from pypaimon.common.external_path_provider import EntropyInjectExternalPathProvider as E\n"
        "p = E(['file:/r'])\n"
        "print(json.dumps([p._compute_hash(n) for n in json.loads(sys.argv[1])]))\n"
    )
    out = subprocess.run([str(oracle_python()), "-c", script, json.dumps(NAMES)], capture_output=True, text=True, check=True)
    assert [entropy_dirs(n) for n in NAMES] == json.loads(out.stdout)
    assert all(len(d.split("/")) == 4 for d in json.loads(out.stdout))


def test_bucket_directories_and_names():
    options = CoreOptions(
        {"data-file.path-directory": "/data/", "data-file.prefix": "p-", "file.compression": "snappy"}, has_primary_key=True
    )
    paths = TablePaths("/wh/db.db/t", options)
    assert paths.bucket_dir("dt=a", 3) == "/wh/db.db/t/data/dt=a/bucket-3"
    assert paths.bucket_dir("", 0) == "/wh/db.db/t/data/bucket-0"
    assert paths.bucket_dir("dt=a", -2) == "/wh/db.db/t/data/dt=a/bucket-postpone"
    new = paths.for_bucket("dt=a", 1)
    first, second, changelog = new.new_data_file(), new.new_data_file(), new.new_changelog_file()
    assert first.name.startswith("p-") and first.name.endswith("-0.parquet") and second.name.endswith("-1.parquet")
    assert first.name[:-10] == second.name[:-10]  # one uuid per bucket writer, a counter per file
    assert changelog.name.startswith("changelog-") and changelog.name.endswith("-2.parquet")
    assert first.path == f"/wh/db.db/t/data/dt=a/bucket-1/{first.name}" and first.external_path is None


# -- snapshots ------------------------------------------------------------------------------------
@pytest.fixture
def table(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    return catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "1"})


def _doc(t, snapshot_id: int) -> dict:
    return json.loads(Path(f"{t.path}/snapshot/snapshot-{snapshot_id}").read_text())


def _batch(ids, value: float) -> pa.Table:
    ids = list(ids)
    return pa.table({"dt": ["a"] * len(ids), "id": ids, "v": [value] * len(ids)}, schema=SCHEMA)


def test_new_snapshots_look_like_paimon_2(table):
    table.write_arrow(_batch([1, 2], 1.0))
    table.write_arrow(_batch([3], 1.0))
    first, second = _doc(table, 1), _doc(table, 2)
    assert list(first)[:3] == ["version", "uuid", "id"]
    assert first["version"] == 3 and first["nextRowId"] == 0 and second["nextRowId"] == 0
    assert first["uuid"] != second["uuid"]
    assert "logOffsets" not in first and "operation" not in first
    assert first["baseManifestListSize"] > 0 and first["deltaManifestListSize"] > 0
    expected_order = [
        "version",
        "uuid",
        "id",
        "schemaId",
        "baseManifestList",
        "baseManifestListSize",
        "deltaManifestList",
        "deltaManifestListSize",
        "commitUser",
        "commitIdentifier",
        "commitKind",
        "timeMillis",
        "totalRecordCount",
        "deltaRecordCount",
        "nextRowId",
    ]
    assert list(second) == expected_order
    if oracle_available():
        assert oracle_snapshot(table.path, 2)["id"] == 2
        assert oracle_read(table.path).num_rows == 3


def test_what_a_snapshot_takes_from_its_parent(table):
    """nextRowId and unknown fields are carried (Paimon 2.0 without row tracking keeps
    nextRowId), log offsets only when there are some; uuid, operation and properties are the
    new commit's own (Paimon's committer never copies them)."""
    table.write_arrow(_batch([1], 1.0))
    path = Path(f"{table.path}/snapshot/snapshot-1")
    doc = json.loads(path.read_text())
    doc.update({"nextRowId": 7, "operation": "TRUNCATE", "properties": {"k": "v"}, "logOffsets": {}, "futureField": 1})
    path.write_text(json.dumps(doc))
    table.write_arrow(_batch([2], 1.0))
    child = _doc(table, 2)
    assert child["nextRowId"] == 7 and child["futureField"] == 1
    assert "operation" not in child and "properties" not in child and "logOffsets" not in child
    assert child["uuid"] != doc["uuid"]
    parsed = Snapshot.from_json(path.read_text(), source=str(path))
    assert (parsed.uuid, parsed.operation, parsed.next_row_id) == (doc["uuid"], "TRUNCATE", 7)


def test_a_09_snapshot_parent_gets_a_zero_next_row_id(table):
    table.write_arrow(_batch([1], 1.0))
    path = Path(f"{table.path}/snapshot/snapshot-1")
    doc = json.loads(path.read_text())
    for key in ("uuid", "nextRowId"):
        doc.pop(key)
    doc["logOffsets"] = {}  # as Paimon 0.9 writes it
    path.write_text(json.dumps(doc))
    table.write_arrow(_batch([2], 1.0))
    assert _doc(table, 2)["nextRowId"] == 0


@pytest.mark.skipif(java_unavailable_reason() is not None, reason="Paimon 2.0 Java oracle not available")
def test_entropy_directories_match_paimon_java(tmp_path):
    from lakestore.meta.file_scan import live_entries
    from tests.oracle.java_driver import java_oracle

    java = java_oracle()
    warehouse = tmp_path / "wh"
    options = {
        "bucket": "1",
        "file.format": "parquet",
        "data-file.external-paths": f"file://{tmp_path}/ext",
        "data-file.external-paths.strategy": "entropy-inject",
    }
    java.create_table(warehouse, "db.t", SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options=options)
    java.write(warehouse, "db.t", _batch([1, 2], 1.0))
    t = lakestore.Catalog(str(warehouse)).get_table("db.t")
    (entry,) = live_entries(t.store.manifests(), t.latest_snapshot())
    assert entry.file.external_path == f"file:{tmp_path}/ext/dt=a/bucket-0/{entropy_dirs(entry.file.file_name)}/{entry.file.file_name}"
    assert t.to_arrow().num_rows == 2
