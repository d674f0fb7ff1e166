"""Fuzzing corrupt and truncated table files (hypothesis): snapshot JSON, schema JSON, manifest
Avro, manifest lists, parquet data files and the LATEST/EARLIEST hints. Reading either returns
exactly the right rows or raises a LakestoreError that names a file (CorruptMetadataError
naming the damaged file, or the file it led to), never a bare KeyError/TypeError/ValueError.
Hints are only hints: any garbage there still reads correctly."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import lakestore
from lakestore.errors import CorruptMetadataError, LakestoreError
from lakestore.meta.file_scan import data_manifests
from lakestore.meta.manifest import ManifestStore

from .conftest import SCHEMA
from .util import make_catalog, sorted_rows

FUZZ = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def _build(root, kind: str) -> lakestore.Table:
    catalog = make_catalog(root)
    # Uncompressed manifests: byte flips reach the Avro records instead of the zstd frame.
    options = {"manifest.compression": "null", "write-only": "true"}
    if kind == "pk":
        table = catalog.create_table(
            "db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={**options, "bucket": "2"}
        )
    else:
        table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], options=options)
    for i in range(3):
        ids = list(range(i * 4, i * 4 + 6))  # overlapping ids: PK reads must merge
        table.write_arrow(pa.table({"id": pa.array(ids, pa.int64()), "dt": [f"p{x % 2}" for x in ids], "v": [f"w{i}-{x}" for x in ids]}))
    table.store.snapshot_manager.write_earliest_hint(1)
    return table


@pytest.fixture(scope="module", params=["append", "pk"])
def fuzz_table(request, tmp_path_factory):
    table = _build(tmp_path_factory.mktemp(f"fuzz-{request.param}"), request.param)
    return table, sorted_rows(table.to_arrow())


def _target(table: lakestore.Table, which: str) -> str:
    latest = table.latest_snapshot()
    store = ManifestStore(table.store.file_io, table.path, compression="null")
    if which == "snapshot":
        return table.store.snapshot_manager.path(latest.id)
    if which == "schema":
        return table.store.schema_manager.path(0)
    if which == "manifest-list":
        return store.path(latest.delta_manifest_list)
    if which == "base-manifest-list":
        return store.path(latest.base_manifest_list)
    if which == "manifest":
        return store.path(data_manifests(store, latest)[0].file_name)
    if which == "data":
        split = table.scan().plan()[0]
        return table.store.split_reader().file_path(split.partition_values, split.bucket, split.files[0])
    return f"{table.path}/snapshot/{which}"


def _read_raw(table: lakestore.Table, path: str, damaged: bytes) -> list[tuple]:
    """The rows a fresh reader sees with ``path`` replaced by ``damaged`` (restored after)."""
    original = open(path, "rb").read()
    with open(path, "wb") as fh:
        fh.write(damaged)
    try:
        return sorted_rows(lakestore.Table(table.path).to_arrow())
    finally:
        with open(path, "wb") as fh:
            fh.write(original)


def _read_damaged(table: lakestore.Table, path: str, damaged: bytes, expected: list[tuple]) -> None:
    try:
        got = _read_raw(table, path, damaged)
    except CorruptMetadataError as exc:
        # names the damaged file, or the file the damage pointed it to
        assert os.path.basename(path) in str(exc) or exc.path.startswith(table.path), exc
        return
    except LakestoreError as exc:
        assert table.path in str(exc) or os.path.basename(path) in str(exc), f"error does not name a file: {exc!r}"
        return
    assert got == expected, f"damaged {os.path.basename(path)} read back wrong rows silently"


@st.composite
def binary_damage(draw, data: bytes, kinds: list[str] | None = None) -> bytes:
    how = draw(st.sampled_from(kinds or ["truncate", "flip", "garbage", "empty"]))
    if how == "truncate":
        return data[: draw(st.integers(0, max(0, len(data) - 1)))]
    if how == "flip":
        out = bytearray(data)
        for _ in range(draw(st.integers(1, 3))):
            out[draw(st.integers(0, len(out) - 1))] ^= draw(st.integers(1, 255))
        return bytes(out)
    if how == "garbage":
        return draw(st.binary(min_size=1, max_size=200))
    return b""


_JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _other_type(old):
    # a value of another JSON type (same-type value changes are undetectable without checksums)
    return _JSON_VALUES.filter(
        lambda v: (
            type(v) is not type(old)
            and not (isinstance(v, int) and isinstance(old, int) and not isinstance(v, bool) and not isinstance(old, bool))
        )
    )


@st.composite
def json_damage(draw, data: bytes) -> bytes:
    """Byte-level damage, or a structurally valid document with a key removed or a value of
    the wrong JSON type."""
    if draw(st.booleans()):
        return draw(binary_damage(data))
    doc = json.loads(data)

    def mutate(node) -> None:
        if isinstance(node, dict) and node:
            key = draw(st.sampled_from(sorted(node)))
            if draw(st.booleans()) and isinstance(node[key], (dict, list)) and node[key]:
                mutate(node[key])
            elif draw(st.booleans()):
                del node[key]
            else:
                node[key] = draw(_other_type(node[key]))
        elif isinstance(node, list) and node:
            i = draw(st.integers(0, len(node) - 1))
            if isinstance(node[i], (dict, list)):
                mutate(node[i])
            else:
                node[i] = draw(_other_type(node[i]))

    mutate(doc)
    return json.dumps(doc).encode()


@pytest.mark.parametrize("which", ["snapshot", "schema"])
@FUZZ
@given(data=st.data())
def test_fuzz_json_metadata(fuzz_table, which, data):
    table, expected = fuzz_table
    path = _target(table, which)
    damaged = data.draw(json_damage(open(path, "rb").read()))
    _read_damaged(table, path, damaged, expected)


@pytest.mark.parametrize("which", ["manifest", "manifest-list", "base-manifest-list", "data"])
@FUZZ
@given(data=st.data())
def test_fuzz_binary_files(fuzz_table, which, data):
    table, expected = fuzz_table
    path = _target(table, which)
    # byte flips inside parquet pages: see test_parquet_byte_flips_never_read_silently
    kinds = ["truncate", "garbage", "empty"] if which == "data" else None
    damaged = data.draw(binary_damage(open(path, "rb").read(), kinds))
    _read_damaged(table, path, damaged, expected)


def test_parquet_byte_flips_never_read_silently(fuzz_table):
    """Every third byte of a data file flipped in turn (a deterministic sweep, not a sample)."""
    table, expected = fuzz_table
    path = _target(table, "data")
    original = open(path, "rb").read()
    silent = []
    for pos in range(0, len(original), 3):
        damaged = bytearray(original)
        damaged[pos] ^= 0x55
        try:
            _read_damaged(table, path, bytes(damaged), expected)
        except AssertionError:
            silent.append(pos)
    assert not silent, f"{len(silent)} of {len(original)} single-byte flips read back wrong rows silently"


@pytest.mark.parametrize("which", ["LATEST", "EARLIEST"])
@FUZZ
@given(
    garbage=st.one_of(st.binary(max_size=30), st.text(max_size=12).map(str.encode), st.integers(-5, 10**20).map(lambda i: str(i).encode()))
)
@example(garbage="²".encode())  # str.isdigit() is True, int() refuses it
@example(garbage="٣".encode())  # an Arabic-Indic 3: int() accepts it
@example(garbage=b"2")
@example(garbage=b" 4\n")
@example(garbage=b"")
def test_fuzz_hints_are_only_hints(fuzz_table, which, garbage):
    table, expected = fuzz_table
    path = _target(table, which)
    original = open(path, "rb").read()
    with open(path, "wb") as fh:
        fh.write(garbage)
    try:
        reopened = lakestore.Table(table.path)
        assert reopened.latest_snapshot().id == 3
        assert [s.id for s in reopened.snapshots()] == [1, 2, 3]
        assert reopened.store.snapshot_manager.earliest_id() == 1
        assert sorted_rows(reopened.to_arrow()) == expected
        assert sorted_rows(reopened.to_arrow(snapshot_id=1)) != expected
    finally:
        with open(path, "wb") as fh:
            fh.write(original)


def test_hint_files_removed_still_read(fuzz_table):
    table, expected = fuzz_table
    for name in ("LATEST", "EARLIEST"):
        path = _target(table, name)
        original = open(path, "rb").read()
        os.unlink(path)
        try:
            assert sorted_rows(lakestore.Table(table.path).to_arrow()) == expected
        finally:
            with open(path, "wb") as fh:
                fh.write(original)


def test_stray_names_in_metadata_dirs_are_ignored(fuzz_table):
    """Names that look almost like snapshot or schema files (another tool's leftovers, a
    crashed writer's temporary file) are not metadata."""
    table, expected = fuzz_table
    strays = [f"{table.path}/snapshot/{n}" for n in ("snapshot-²", "snapshot-", "snapshot-x", ".snapshot-4.abc.tmp")]
    strays += [f"{table.path}/schema/{n}" for n in ("schema-³", "schema-1.bak", ".schema-1.abc.tmp")]
    for path in strays:
        with open(path, "wb") as fh:
            fh.write(b"{not json")
    try:
        reopened = lakestore.Table(table.path)
        assert [s.id for s in reopened.snapshots()] == [1, 2, 3]
        assert sorted_rows(reopened.to_arrow()) == expected
    finally:
        for path in strays:
            os.unlink(path)


@pytest.mark.parametrize(
    ("field", "value"), [("_KIND", 5), ("_KIND", -1), ("_ROW_COUNT", 999), ("_FILE_NAME", "data-missing.parquet"), ("_BUCKET", 7)]
)
def test_manifest_entry_damage_is_detected(fuzz_table, field, value):
    """Decodable but wrong manifest entries: an unknown kind, a row count the file does not
    hold, a missing file, a bucket with no such directory."""
    import io

    import fastavro

    from lakestore.meta.manifest import MANIFEST_ENTRY_SCHEMA

    table, expected = fuzz_table
    path = _target(table, "manifest")
    records = list(fastavro.reader(io.BytesIO(open(path, "rb").read())))
    target = records[0]["_FILE"] if field in ("_ROW_COUNT", "_FILE_NAME") else records[0]
    target[field] = value
    out = io.BytesIO()
    fastavro.writer(out, MANIFEST_ENTRY_SCHEMA, records, codec="null")
    with pytest.raises(CorruptMetadataError) as info:
        _read_raw(table, path, out.getvalue())
    assert info.value.path.startswith(table.path)
