"""System tables against the table's real state: the snapshots written, the files on disk, the
tags, branches and consumers created, the rows and their kinds; identifiers and refusals."""

from __future__ import annotations

import datetime as dt
import json
import os

import pyarrow as pa
import pytest

import lakestore
from lakestore.cli import main
from lakestore.errors import InvalidIdentifierError, SchemaMismatchError, TableNotFoundError, UnsupportedTableError
from lakestore.format.types import parse_type
from lakestore.meta.schema_change import AddColumn
from lakestore.system import SYSTEM_TABLES
from lakestore.system.source import cast_string, java_double, java_duration, local_millis, object_string

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.float64())])


def rows(dt_: str, ids: list[int], v: float = 1.0) -> pa.Table:
    return pa.table({"dt": [dt_] * len(ids), "id": ids, "v": [v] * len(ids)}, schema=SCHEMA)


@pytest.fixture
def catalog(tmp_path) -> lakestore.Catalog:
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db")
    return c


@pytest.fixture
def table(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"})
    t.write_arrow(rows("a", [1, 2, 3]), commit_user="ingest", commit_identifier=7)
    t.write_arrow(rows("b", [4]))
    t.delete(lakestore.col("id") == 2)
    return catalog.get_table("db.t")


def test_snapshots_are_the_snapshots_written(table):
    got = table.inspect.snapshots()
    written = table.snapshots()
    assert got.column("snapshot_id").to_pylist() == [s.id for s in written] == [1, 2, 3]
    assert got.column("commit_kind").to_pylist() == ["APPEND"] * 3
    first = got.to_pylist()[0]
    assert (first["commit_user"], first["commit_identifier"], first["total_record_count"], first["delta_record_count"]) == (
        "ingest",
        7,
        3,
        3,
    )
    assert got.column("delta_manifest_list").to_pylist() == [s.delta_manifest_list for s in written]
    # local wall-clock time of the commit
    expected = dt.datetime.fromtimestamp(written[0].time_millis / 1000).replace(microsecond=written[0].time_millis % 1000 * 1000)
    assert first["commit_time"] == expected
    table.compact(full=True)
    assert table.inspect.snapshots().column("commit_kind").to_pylist()[-1] == "COMPACT"


def test_files_are_the_live_files_on_disk(table):
    files = table.inspect.files()
    live = table.store.live_files()
    assert files.num_rows == len(live) > 0
    assert sorted(files.column("file_path").to_pylist()) == sorted(
        f"{table.path}/{f.partition_path}/bucket-{f.bucket}/{f.file_name}" for f in live
    )
    assert all(
        os.path.getsize(p) == size
        for p, size in zip(files.column("file_path").to_pylist(), files.column("file_size_in_bytes").to_pylist(), strict=True)
    )
    assert set(files.column("partition").to_pylist()) == {"{a}", "{b}"}
    assert set(files.column("file_format").to_pylist()) == {"parquet"}
    # the deletion's file holds one -D row of key 2
    deletes = files.filter(pa.compute.equal(files.column("deleteRowCount"), 1)).to_pylist()
    assert [(d["min_key"], d["max_key"], d["record_count"]) for d in deletes] == [("[2]", "[2]", 1)]
    # time travel: snapshot 1 had the first write's files only
    assert table.inspect.files(snapshot_id=1).column("partition").to_pylist() == ["{a}"] * table.inspect.files(snapshot_id=1).num_rows


def test_partitions_and_buckets_sum_the_files(table):
    files = table.inspect.files().to_pylist()
    partitions = table.inspect.partitions().to_pylist()
    assert [p["partition"] for p in partitions] == ["dt=a", "dt=b"]
    for p in partitions:
        mine = [f for f in files if f["partition"] == "{" + p["partition"][3:] + "}"]
        assert p["record_count"] == sum(f["record_count"] for f in mine)
        assert p["file_count"] == len(mine) and p["file_size_in_bytes"] == sum(f["file_size_in_bytes"] for f in mine)
        assert p["last_update_time"] == max(f["creation_time"] for f in mine)
        assert (p["total_buckets"], p["done"], p["deleted_record_count"]) == (2, False, 0)
    buckets = table.inspect.buckets().to_pylist()
    assert sum(b["file_count"] for b in buckets) == len(files)
    assert [(b["partition"], b["bucket"]) for b in buckets] == sorted({(f["partition"], f["bucket"]) for f in files})


def test_manifests_are_the_snapshots_data_manifests(table):
    snapshot = table.latest_snapshot()
    store = table.store.manifests()
    expected = store.read_list(snapshot.base_manifest_list) + store.read_list(snapshot.delta_manifest_list)
    got = table.inspect.manifests()
    assert got.column("file_name").to_pylist() == [m.file_name for m in expected]
    assert sum(got.column("num_added_files").to_pylist()) - sum(got.column("num_deleted_files").to_pylist()) == len(
        table.store.live_files()
    )
    assert all(os.path.exists(f"{table.path}/manifest/{name}") for name in got.column("file_name").to_pylist())


def test_audit_log_keeps_deleted_keys_and_binlog_packs_them(table):
    audit = table.inspect.audit_log().sort_by([("id", "ascending")])
    assert audit.column_names == ["rowkind", "dt", "id", "v"]
    assert list(zip(audit.column("rowkind").to_pylist(), audit.column("id").to_pylist(), strict=True)) == [
        ("+I", 1),
        ("-D", 2),
        ("+I", 3),
        ("+I", 4),
    ]
    binlog = table.inspect.binlog().sort_by([("rowkind", "descending")])
    assert binlog.schema.field("id").type == pa.list_(pa.field("item", pa.int64()))
    assert binlog.column("id").to_pylist()[0] == [2] and binlog.column("rowkind").to_pylist()[0] == "-D"
    # snapshot 2 predates the deletion; a full compaction drops the -D
    assert "-D" not in table.inspect.audit_log(snapshot_id=2).column("rowkind").to_pylist()
    table.compact(full=True)
    compacted = table.inspect.audit_log().sort_by([("id", "ascending")])
    assert compacted.column("id").to_pylist() == [1, 3, 4] and set(compacted.column("rowkind").to_pylist()) == {"+I"}


def test_audit_log_of_an_append_table(catalog):
    t = catalog.create_table("db.ap", schema=pa.schema([("x", pa.int32())]))
    t.write_arrow(pa.table({"x": pa.array([1, 2], pa.int32())}))
    assert t.inspect.audit_log().to_pylist() == [{"rowkind": "+I", "x": 1}, {"rowkind": "+I", "x": 2}]


def test_tags_branches_consumers_options_schemas(catalog, table):
    table.manage.create_tag("t1", snapshot_id=1, time_retained="90 min")
    table.manage.create_tag("t2")
    tags = table.inspect.tags().to_pylist()
    assert [(t["tag_name"], t["snapshot_id"], t["record_count"], t["time_retained"]) for t in tags] == [
        ("t1", 1, 3, "PT1H30M"),
        ("t2", 3, 5, None),
    ]
    assert all(abs(t["create_time"] - dt.datetime.now()) < dt.timedelta(minutes=5) for t in tags)
    assert table.inspect.files(tag="t1").num_rows == table.inspect.files(snapshot_id=1).num_rows
    table.manage.create_branch("dev", tag="t1")
    branches = table.inspect.branches().to_pylist()
    assert [b["branch_name"] for b in branches] == ["dev"]
    mtime = os.stat(f"{table.path}/branch/branch-dev").st_mtime_ns // 1_000_000
    assert branches[0]["create_time"] == pa.scalar(local_millis(mtime), pa.timestamp("ms")).as_py()
    table.manage.reset_consumer("job", 2)
    assert table.inspect.consumers().to_pylist() == [{"consumer_id": "job", "next_snapshot_id": 2}]
    assert dict(zip(*table.inspect.options().to_pydict().values(), strict=True)) == table.schema.options
    catalog.alter_table("db.t", [AddColumn("w", pa.string())])
    schemas = catalog.get_table("db.t").inspect.schemas().to_pylist()
    assert [s["schema_id"] for s in schemas] == [0, 1]
    assert [f["name"] for f in json.loads(schemas[1]["fields"])] == ["dt", "id", "v", "w"]
    assert json.loads(schemas[0]["primary_keys"]) == ["dt", "id"] and schemas[0]["comment"] is None
    # the branch's own system tables
    dev = catalog.get_system_table("db.t$branch_dev$snapshots").to_arrow()
    assert dev.column("snapshot_id").to_pylist() == [1]
    assert catalog.get_system_table("db.t$branch_dev$tags").to_arrow().column("tag_name").to_pylist() == ["t1"]


def test_index_files_of_a_dynamic_bucket_table(catalog):
    t = catalog.create_table("db.dyn", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"])
    t.write_arrow(rows("a", [1, 2, 3]))
    indexes = t.inspect.table_indexes().to_pylist()
    assert [(i["partition"], i["bucket"], i["index_type"], i["row_count"], i["dv_ranges"]) for i in indexes] == [
        ("{a}", 0, "HASH", 3, None)
    ]
    assert os.path.getsize(f"{t.path}/index/{indexes[0]['file_name']}") == indexes[0]["file_size"] == 12


def test_catalog_identifiers(catalog, table):
    snapshots = catalog.get_system_table("db.t$snapshots")
    assert snapshots.identifier == "db.t$snapshots" and snapshots.schema == table.inspect.schema("snapshots")
    assert snapshots.to_arrow(columns=["commit_kind", "snapshot_id"]).column_names == ["commit_kind", "snapshot_id"]
    assert catalog.get_system_table("db.t$FILES").to_arrow().num_rows == table.inspect.files().num_rows
    assert catalog.get_system_table("db.t$files").to_arrow(snapshot_id=1).equals(table.inspect.files(snapshot_id=1))
    with pytest.raises(TableNotFoundError, match="unknown system table"):
        catalog.get_system_table("db.t$nope")
    with pytest.raises(TableNotFoundError):
        catalog.get_system_table("db.missing$snapshots")
    with pytest.raises(InvalidIdentifierError):
        catalog.get_system_table("db.t$files$snapshots")
    # a system table is not a Table: get_table says where to find it instead of returning another type
    with pytest.raises(InvalidIdentifierError, match=r"get_system_table\('db.t\$snapshots'\)"):
        catalog.get_table("db.t$snapshots")
    with pytest.raises(InvalidIdentifierError, match="names no system table"):
        catalog.get_system_table("db.t")
    with pytest.raises(SchemaMismatchError):
        snapshots.to_arrow(columns=["nope"])
    with pytest.raises(ValueError, match="reads no snapshot"):
        table.inspect.table("snapshots", snapshot_id=1)
    assert set(SYSTEM_TABLES) >= {"snapshots", "files", "audit_log", "binlog", "table_indexes", "statistics"}


def test_writes_to_a_system_table_are_refused_by_name(catalog, table):
    files = catalog.get_system_table("db.t$files")
    before = table.store.snapshot_manager.latest_id()
    for call in (
        lambda: files.write_arrow(rows("a", [9])),
        lambda: files.compact(),
        lambda: files.manage.create_tag("x"),
        lambda: files.maintenance.expire_snapshots(),
    ):
        with pytest.raises(UnsupportedTableError, match=r"system table db\.t\$files"):
            call()
    assert table.store.snapshot_manager.latest_id() == before


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1.0"),
        (0.1, "0.1"),
        (1e-5, "1.0E-5"),
        (2e7, "2.0E7"),
        (12345678.9, "1.23456789E7"),
        (-0.001, "-0.001"),
        (100.0, "100.0"),
        (1e300, "1.0E300"),
    ],
)
def test_java_double(value, text):
    assert java_double(value) == text


def test_java_printing():
    assert [java_duration(ms) for ms in (0, 500, 3_600_000, 5_400_000, 172_800_000 + 1500)] == [
        "PT0S",
        "PT0.5S",
        "PT1H",
        "PT1H30M",
        "PT48H1.5S",
    ]
    assert cast_string(dt.datetime(2024, 1, 2, 3, 4, 5, 6000), parse_type("TIMESTAMP(3)")) == "2024-01-02 03:04:05.006"
    assert cast_string(dt.date(2024, 1, 2), parse_type("DATE")) == "2024-01-02"
    assert object_string(dt.date(1970, 1, 11), parse_type("DATE")) == "10"
    assert object_string(dt.datetime(2024, 1, 2, 3, 4), parse_type("TIMESTAMP(3)")) == "2024-01-02T03:04"
    assert object_string(dt.datetime(2024, 1, 2, 3, 4, 5, 120000), parse_type("TIMESTAMP(6)")) == "2024-01-02T03:04:05.120"


def test_cli_inspect(catalog, table, capsys):
    warehouse = catalog.warehouse
    assert main(["-q", "--json", "-w", warehouse, "inspect", "db.t", "partitions"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [(p["partition"], p["record_count"]) for p in got] == [
        ("dt=a", 4),
        ("dt=b", 1),
    ]  # the -D row counts: record counts are rows in files
    assert main(["-q", "--json", "-w", warehouse, "inspect", "db.t", "files", "--snapshot", "1"]) == 0
    assert [f["file_path"] for f in json.loads(capsys.readouterr().out)] == table.inspect.files(snapshot_id=1).column(
        "file_path"
    ).to_pylist()
    assert main(["-q", "-w", warehouse, "inspect", "db.t$branch_nope", "snapshots"]) == 3
    assert main(["-q", "-w", warehouse, "inspect", "db.t", "snapshots", "--tag", "x"]) == 1


def test_read_optimized_aggregation_fields_and_key_ranges(catalog, table):
    assert table.inspect.read_optimized().num_rows == 0  # nothing compacted to the top level yet
    table.compact(full=True)
    ro = table.inspect.read_optimized().sort_by([("id", "ascending")])
    assert ro.equals(table.to_arrow().sort_by([("id", "ascending")]))
    ranges = table.inspect.file_key_ranges()
    assert ranges.column_names[-3:] == ["min_key", "max_key", "first_row_id"]
    assert ranges.equals(table.inspect.files().select(ranges.column_names))
    agg = catalog.create_table(
        "db.agg", schema=SCHEMA, primary_keys=["dt", "id"], options={"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"}
    )
    fields = agg.inspect.aggregation_fields().to_pylist()
    assert [(f["field_name"], f["field_type"], f["function"], f["function_options"]) for f in fields] == [
        ("dt", "STRING NOT NULL", "[]", "[]"),
        ("id", "BIGINT NOT NULL", "[]", "[]"),
        ("v", "DOUBLE", "[sum]", "[fields.v.aggregate-function]"),
    ]
