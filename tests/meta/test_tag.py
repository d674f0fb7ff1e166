"""Tag files (``lakestore.meta.tag``): Paimon's JSON form, and reading a branch's tags."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import CorruptMetadataError, InvalidTagNameError, TagNotFoundError
from lakestore.io.fileio import LocalFileIO
from lakestore.meta.tag import TagReader, parse_tag, tag_to_json, validate_tag_name


@pytest.fixture
def table(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    schema = pa.schema([("id", pa.int64())])
    t = catalog.create_table("db.t", schema=schema)
    for i in range(3):
        t.write_arrow(pa.table({"id": [i]}, schema=schema))
    return t


def test_tag_json_round_trip_in_the_forms_paimon_writes(table):
    snapshot = table.snapshot(2)
    created = dt.datetime(2024, 5, 6, 7, 8, 9, 123456)
    doc = json.loads(tag_to_json(snapshot, created, 90_000))
    assert doc["id"] == 2 and doc["tagCreateTime"] == [2024, 5, 6, 7, 8, 9, 123456000] and doc["tagTimeRetained"] == 90.0
    tag = parse_tag("t", json.dumps(doc).encode(), source="tag-t")
    assert (tag.snapshot, tag.create_time, tag.time_retained_ms) == (snapshot, created, 90_000)
    # Jackson omits trailing zero seconds and nanos; some writers emit ISO strings
    doc["tagCreateTime"] = [2024, 5, 6, 7, 8]
    assert parse_tag("t", json.dumps(doc).encode(), source="tag-t").create_time == dt.datetime(2024, 5, 6, 7, 8)
    doc["tagCreateTime"] = "2024-05-06T07:08:09"
    assert parse_tag("t", json.dumps(doc).encode(), source="tag-t").create_time == dt.datetime(2024, 5, 6, 7, 8, 9)
    del doc["tagCreateTime"], doc["tagTimeRetained"]
    plain = parse_tag("t", json.dumps(doc).encode(), source="tag-t")
    assert (plain.create_time, plain.time_retained_ms, plain.expired()) == (None, None, False)
    for name in ("", "12", "a/b", ".hidden"):
        with pytest.raises(InvalidTagNameError):
            validate_tag_name(name)


def test_reader_lists_and_gets_the_tags_of_a_branch(table, tmp_path):
    io = LocalFileIO()
    tag_dir = f"{table.path}/tag"
    io.write_bytes(f"{tag_dir}/tag-b", tag_to_json(table.snapshot(1), dt.datetime(2024, 1, 1), None).encode())
    io.write_bytes(f"{tag_dir}/tag-a", tag_to_json(table.snapshot(3), dt.datetime(2024, 1, 1), None).encode())
    io.write_bytes(f"{tag_dir}/tag-c", tag_to_json(table.snapshot(1), dt.datetime(2024, 1, 1), None).encode())
    io.write_bytes(f"{tag_dir}/other", b"{}")
    reader = TagReader(io, table.path)
    assert reader.names() == ["a", "b", "c"]
    assert [(t.name, t.snapshot_id) for t in reader.tags()] == [("b", 1), ("c", 1), ("a", 3)]  # by snapshot, then name
    assert reader.exists("a") and not reader.exists("other")
    assert reader.get("a").snapshot == table.snapshot(3)
    with pytest.raises(TagNotFoundError, match="'other'"):
        reader.get("other")
    assert TagReader(io, str(tmp_path / "nowhere")).tags() == []


def test_a_tag_file_met_empty_is_corrupt_metadata(table):
    """Paimon Java rewrites a tag file in place (truncate, then write): a reader meeting it empty
    raises instead of reading no tag."""
    io = LocalFileIO()
    io.write_bytes(f"{table.path}/tag/tag-v1", b"")
    reader = TagReader(io, table.path)
    with pytest.raises(CorruptMetadataError, match="tag-v1"):
        reader.get("v1")
    with pytest.raises(CorruptMetadataError):
        reader.tags()
