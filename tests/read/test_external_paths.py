"""Data-file naming and placement options of Paimon 2.0 (lakestore/meta/paths.py) across engines:
``data-file.prefix``, ``changelog-file.prefix``, ``file.suffix.include.compression``,
``data-file.path-directory`` and ``data-file.external-paths`` (files outside the table directory,
their absolute path in ``_EXTERNAL_PATH``). lakestore writes them and pypaimon 2.1 reads them;
pypaimon writes external paths and lakestore reads, compacts, expires and cleans them."""

from __future__ import annotations

import glob
import os
import time

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import OptionError
from lakestore.io.fileio import local_path
from lakestore.meta.file_scan import live_entries
from tests._support import assert_same_rows
from tests.oracle.driver import oracle_available, oracle_manifests, oracle_read, oracle_write

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.float64())])
oracle = pytest.mark.skipif(not oracle_available(), reason="oracle venv not available")


def _batch(dt: str, ids, value: float) -> pa.Table:
    ids = list(ids)
    return pa.table({"dt": [dt] * len(ids), "id": ids, "v": [value] * len(ids)}, schema=SCHEMA)


@pytest.fixture
def catalog(tmp_path):
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db")
    return c


def _entries(t):
    return live_entries(t.store.manifests(), t.latest_snapshot())


def _parquet_files(root) -> list[str]:
    return sorted(glob.glob(f"{root}/**/*.parquet", recursive=True))


@pytest.mark.parametrize("strategy", ["round-robin", "specific-fs", "entropy-inject", "weight-robin"])
@pytest.mark.parametrize("uri_style", ["file:///", "file:/"])
def test_lakestore_writes_external_paths_that_pypaimon_reads(catalog, tmp_path, strategy, uri_style):
    roots = [tmp_path / "ext1", tmp_path / "ext2"]
    options = {
        "bucket": "2",
        "data-file.external-paths": ",".join(uri_style + str(r).lstrip("/") for r in roots),
        "data-file.external-paths.strategy": strategy,
        "changelog-producer": "input",
    }
    if strategy == "specific-fs":
        options["data-file.external-paths.specific-fs"] = "file"
    if strategy == "weight-robin":
        options["data-file.external-paths.weights"] = "1,3"
    t = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options=options)
    t.write_arrow(_batch("a", range(10), 1.0))
    t.write_arrow(_batch("a", range(5), 2.0))
    t.write_arrow(_batch("b", [1], 3.0))
    # nothing but metadata in the table directory; every data and changelog file outside it
    assert _parquet_files(t.path) == []
    entries = _entries(t)
    for e in entries:
        assert e.file.external_path is not None
        # spelled as Paimon's Path prints a local URI, the relative bucket path under the root
        assert e.file.external_path.startswith("file:/") and not e.file.external_path.startswith("file://")
        local = e.file.external_path[len("file:") :]
        assert os.path.exists(local)
        part = "dt=a" if "dt=a" in local else "dt=b"
        assert f"/{part}/bucket-{e.bucket}/" in local
        if strategy == "entropy-inject":
            tail = local.split(f"/bucket-{e.bucket}/", 1)[1].split("/")
            assert [len(x) for x in tail[:-1]] == [4, 4, 4, 8] and set("".join(tail[:-1])) <= {"0", "1"}
    assert {f.external_path for f in t.store.live_files()} == {e.file.external_path for e in entries}
    expected = t.to_arrow()
    assert expected.num_rows == 11
    assert_same_rows(oracle_read(t.path) if oracle_available() else expected, expected, ["dt", "id"])
    # compaction reads the external files and writes its output there too
    t.compact(full=True)
    assert all(e.file.external_path for e in _entries(t))
    assert_same_rows(t.to_arrow(), expected, ["dt", "id"])
    if oracle_available():
        assert_same_rows(oracle_read(t.path), expected, ["dt", "id"])
        assert_same_rows(oracle_read(t.path, native=True), expected, ["dt", "id"])
    # expiration removes the external files only the expired snapshots referenced
    before = set(_parquet_files(tmp_path / "ext1")) | set(_parquet_files(tmp_path / "ext2"))
    t.maintenance.expire_snapshots(num_retained_min=1, num_retained_max=1, time_retained_ms=0)
    after = set(_parquet_files(tmp_path / "ext1")) | set(_parquet_files(tmp_path / "ext2"))
    live = {e.file.external_path[len("file:") :] for e in _entries(t)}
    assert live <= after < before
    assert_same_rows(t.to_arrow(), expected, ["dt", "id"])


def test_specific_fs_keeps_only_roots_of_that_scheme(catalog, tmp_path):
    t = catalog.create_table(
        "db.t",
        schema=SCHEMA,
        primary_keys=["dt", "id"],
        partition_keys=["dt"],
        options={
            "bucket": "1",
            "data-file.external-paths": f"s3://nowhere/x,file://{tmp_path}/local",
            "data-file.external-paths.strategy": "specific-fs",
            "data-file.external-paths.specific-fs": "file",
        },
    )
    t.write_arrow(_batch("a", [1], 1.0))
    (entry,) = _entries(t)
    assert entry.file.external_path == f"file:{tmp_path}/local/dt=a/bucket-0/{entry.file.file_name}"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"data-file.external-paths": "/no/scheme", "data-file.external-paths.strategy": "round-robin"}, "has no scheme"),
        ({"data-file.external-paths": "file:///x", "data-file.external-paths.strategy": "specific-fs"}, "specific-fs"),
        (
            {
                "data-file.external-paths": "file:///x",
                "data-file.external-paths.strategy": "specific-fs",
                "data-file.external-paths.specific-fs": "s3",
            },
            "no path left",
        ),
        ({"data-file.external-paths": "file:///x,s3://b/y", "data-file.external-paths.strategy": "round-robin"}, "mixes file systems"),
        ({"data-file.external-paths.strategy": "sideways"}, "data-file.external-paths.strategy"),
        (
            {
                "data-file.external-paths": "file:///x,file:///y",
                "data-file.external-paths.strategy": "weight-robin",
                "data-file.external-paths.weights": "1,2,3",
            },
            "3 weights for 2",
        ),
    ],
)
def test_bad_external_path_options_name_the_option(catalog, options, message):
    with pytest.raises(OptionError, match=message):
        all_options = {"bucket": "1", **options}
        t = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=all_options)
        t.write_arrow(_batch("a", [1], 1.0))


def test_strategy_none_writes_into_the_table(catalog, tmp_path):
    t = catalog.create_table(
        "db.t",
        schema=SCHEMA,
        primary_keys=["dt", "id"],
        partition_keys=["dt"],
        options={"bucket": "1", "data-file.external-paths": f"file://{tmp_path}/ext"},
    )
    t.write_arrow(_batch("a", [1], 1.0))
    (entry,) = _entries(t)
    assert entry.file.external_path is None
    assert os.path.exists(f"{t.path}/dt=a/bucket-0/{entry.file.file_name}")


@pytest.mark.parametrize("primary_key", [True, False])
def test_prefixes_suffix_and_directory(catalog, primary_key):
    options = {
        "bucket": "1" if primary_key else "-1",
        "data-file.prefix": "d-",
        "changelog-file.prefix": "cl-",
        "file.suffix.include.compression": "true",
        "data-file.path-directory": "data",
    }
    if primary_key:
        options["changelog-producer"] = "input"
    t = catalog.create_table(
        "db.t", schema=SCHEMA, primary_keys=["dt", "id"] if primary_key else (), partition_keys=["dt"], options=options
    )
    t.write_arrow(_batch("a", [1, 2], 1.0))
    t.write_arrow(_batch("a", [2, 3], 2.0))
    bucket = "bucket-0" if primary_key else "bucket-0"
    names = sorted(os.listdir(f"{t.path}/data/dt=a/{bucket}"))
    assert names and all(n.endswith(".zst.parquet") for n in names)
    assert any(n.startswith("d-") for n in names)
    assert all(n.startswith("d-") or (primary_key and n.startswith("cl-")) for n in names)
    assert primary_key == any(n.startswith("cl-") for n in names)
    assert not os.path.exists(f"{t.path}/dt=a")
    expected = t.to_arrow()
    t.compact(full=True)
    assert_same_rows(t.to_arrow(), expected, ["dt", "id"])
    assert all(n.startswith(("d-", "cl-")) for n in os.listdir(f"{t.path}/data/dt=a/{bucket}"))
    if oracle_available():
        assert_same_rows(oracle_read(t.path), expected, ["dt", "id"])
    # orphan cleanup walks data-file.path-directory and keeps every live file
    stray = f"{t.path}/data/dt=a/{bucket}/d-stray-0.zst.parquet"
    open(stray, "wb").write(b"junk")
    old = time.time() - 3 * 86400
    os.utime(stray, (old, old))
    done = t.maintenance.remove_orphan_files()
    assert done.deleted == (f"data/dt=a/{bucket}/d-stray-0.zst.parquet",)
    assert_same_rows(t.to_arrow(), expected, ["dt", "id"])


def test_compression_extensions():
    from lakestore.meta.paths import file_extension

    assert file_extension("zstd", True) == ".zst.parquet"
    assert file_extension("gzip", True) == ".gz.parquet"
    assert file_extension("snappy", True) == ".snappy.parquet"
    assert file_extension("none", True) == ".parquet"
    assert file_extension("zstd", False) == ".parquet"


@oracle
@pytest.mark.parametrize("primary_key", [True, False])
def test_lakestore_reads_compacts_and_cleans_pypaimon_external_paths(tmp_path, primary_key):
    """pypaimon 2.1 writes data files under an external path (as Paimon Java spells it or not):
    lakestore reads them (was: ``CorruptMetadataError ... Expected a local filesystem path, got a
    URI``), compacts them, expires and never orphan-cleans a live one."""
    warehouse = tmp_path / "wh"
    ext = tmp_path / "ext"
    options = {
        "bucket": "1" if primary_key else "-1",
        "file.format": "parquet",
        "data-file.external-paths": f"file://{ext}",
        "data-file.external-paths.strategy": "round-robin",
    }
    keys = {"primary_keys": ["dt", "id"]} if primary_key else {}
    oracle_write(warehouse, "db.t", _batch("a", range(5), 1.0), partition_keys=["dt"], options=options, **keys)
    oracle_write(warehouse, "db.t", _batch("a", range(3), 2.0), partition_keys=["dt"], options=options, **keys)
    t = lakestore.Catalog(str(warehouse)).get_table("db.t")
    entries = _entries(t)
    assert entries and all(e.file.external_path for e in entries)
    assert _parquet_files(t.path) == []
    expected = oracle_read(t.path)
    assert_same_rows(t.to_arrow(), expected, ["dt", "id"] if primary_key else ["dt", "id", "v"])
    # lakestore's own DELETE entries name the files exactly as pypaimon's ADDs did
    t.compact(full=True)
    manifests = oracle_manifests(t.path)
    assert manifests  # pypaimon decodes what lakestore wrote
    assert_same_rows(t.to_arrow(), expected, ["dt", "id"] if primary_key else ["dt", "id", "v"])
    assert_same_rows(oracle_read(t.path), expected, ["dt", "id"] if primary_key else ["dt", "id", "v"])
    done = t.maintenance.remove_orphan_files(older_than_ms=4_102_444_800_000)
    assert done.deleted == ()  # every external file is referenced by some snapshot
    t.maintenance.expire_snapshots(num_retained_min=1, num_retained_max=1, time_retained_ms=0)
    live = {os.path.normpath(local_path(e.file.external_path)) for e in _entries(t)}
    assert set(_parquet_files(ext)) == live
    assert_same_rows(t.to_arrow(), expected, ["dt", "id"] if primary_key else ["dt", "id", "v"])


@oracle
def test_lakestore_reads_pypaimon_files_under_a_data_directory_with_a_prefix(tmp_path):
    warehouse = tmp_path / "wh"
    options = {"bucket": "1", "file.format": "parquet", "data-file.prefix": "p-", "data-file.path-directory": "dd"}
    keys = {"primary_keys": ["dt", "id"], "partition_keys": ["dt"]}
    oracle_write(warehouse, "db.t", _batch("a", range(5), 1.0), options=options, **keys)
    oracle_write(warehouse, "db.t", _batch("a", range(3), 2.0), options=options, **keys)
    t = lakestore.Catalog(str(warehouse)).get_table("db.t")
    files = _parquet_files(t.path)
    assert files and all("/dd/dt=a/bucket-0/p-" in p for p in files)
    expected = oracle_read(t.path)
    assert_same_rows(t.to_arrow(), expected, ["dt", "id"])
    t.compact(full=True)
    assert_same_rows(oracle_read(t.path), expected, ["dt", "id"])
    assert all("/dd/dt=a/bucket-0/p-" in p for p in _parquet_files(t.path))  # lakestore's files too


def test_orphan_cleanup_lists_the_external_bucket_directories_only(catalog, tmp_path):
    ext = tmp_path / "ext"
    t = catalog.create_table(
        "db.t",
        schema=SCHEMA,
        partition_keys=["dt"],
        primary_keys=["dt", "id"],
        options={"bucket": "1", "data-file.external-paths": f"file://{ext}", "data-file.external-paths.strategy": "round-robin"},
    )
    t.write_arrow(_batch("a", [1, 2], 1.0))
    stray = ext / "dt=a" / "bucket-0" / "data-stray-0.parquet"
    unrelated = ext / "someone-else" / "file.parquet"  # the root may hold other things: never touched
    for path in (stray, unrelated):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"junk")
        old = time.time() - 3 * 86400
        os.utime(path, (old, old))
    done = t.maintenance.remove_orphan_files()
    assert done.deleted == (str(stray),)
    assert not stray.exists() and unrelated.exists()
    assert t.to_arrow().num_rows == 2
