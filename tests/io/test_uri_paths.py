"""Data files named by URI (Paimon's ``_EXTERNAL_PATH``: ``file:/x``, ``file:///x``, ``s3://b/k``):
the local FileIO opens ``file:`` URIs, and ``io_for`` picks the FileIO of another file system.
A valid parquet file at a ``file:`` URI was reported corrupt ("Expected a local filesystem
path, got a URI")."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakestore.io.factory import io_for
from lakestore.io.fileio import LocalFileIO, local_path, uri_scheme
from lakestore.io.s3 import S3FileIO
from lakestore.read.parquet_read import read_parquet_file


@pytest.mark.parametrize(
    ("path", "scheme"),
    [("/tmp/x", ""), ("relative/x", ""), ("file:/tmp/x", "file"), ("file:///tmp/x", "file"), ("S3://b/k", "s3"), ("s3a://b/k", "s3a")],
)
def test_uri_scheme(path, scheme):
    assert uri_scheme(path) == scheme


def test_windows_drive_is_no_scheme():
    assert uri_scheme("C:/data/x.parquet") == ""


@pytest.mark.parametrize("spelling", ["file:{p}", "file://{p}", "file://localhost{p}", "{p}"])
def test_local_path(spelling):
    assert local_path(spelling.format(p="/tmp/a b/x.parquet")) == "/tmp/a b/x.parquet"


def test_local_path_refuses_another_host():
    with pytest.raises(ValueError, match="another host"):
        local_path("file://otherhost/tmp/x")


@pytest.mark.parametrize("prefix", ["file:", "file://"])
def test_local_file_io_takes_file_uris(tmp_path, prefix):
    io = LocalFileIO()
    uri = f"{prefix}{tmp_path}/d/x.bin"
    io.write_bytes(uri, b"abc")
    assert io.exists(uri) and io.read_bytes(uri) == b"abc" and io.file_size(uri) == 3
    assert [s.path for s in io.list_status(f"{prefix}{tmp_path}/d")] == [f"{tmp_path}/d/x.bin"]
    assert io.try_publish(f"{prefix}{tmp_path}/d/y.bin", b"1") and not io.try_publish(f"{prefix}{tmp_path}/d/y.bin", b"2")
    with io.open_output(f"{prefix}{tmp_path}/d/z.bin") as out:
        out.write(b"zz")
    assert (tmp_path / "d" / "z.bin").read_bytes() == b"zz"
    io.delete(uri)
    assert not (tmp_path / "d" / "x.bin").exists()


@pytest.mark.parametrize("prefix", ["file:", "file://"])
def test_a_parquet_file_at_a_file_uri_is_read_not_reported_corrupt(tmp_path, prefix):
    table = pa.table({"a": [1, 2, 3]})
    pq.write_table(table, tmp_path / "data-x-0.parquet")
    got, rows = read_parquet_file(LocalFileIO(), f"{prefix}{tmp_path}/data-x-0.parquet", ["a"])
    assert got.equals(table) and rows == 3


def test_io_for_picks_the_file_system_of_the_path():
    local = LocalFileIO()
    assert io_for(local, "/tmp/x") is local
    assert io_for(local, "file:/tmp/x") is local
    other = io_for(local, "s3://bucket/t/bucket-0/data-0.parquet", {"s3.endpoint": "http://127.0.0.1:1"})
    assert isinstance(other, S3FileIO)
    assert io_for(local, "s3://bucket/other", {"s3.endpoint": "http://127.0.0.1:1"}) is other  # built once
    s3 = S3FileIO()
    assert io_for(s3, "s3://bucket/k") is s3
    assert isinstance(io_for(s3, "file:/tmp/x"), LocalFileIO)
