"""Tables lakestore creates or alters are tables Paimon 2.0 accepts: the rules of Paimon's
SchemaValidation.validateTableSchema (run by Paimon on create and on every alter), its merge
function factories and Schema's key checks, each refused by name before anything is written.
tests/interop/test_java_merge_engines.py checks a sample of them against Paimon 2.0.0 Java.
Also TIME columns: created from Arrow time32/time64, read back as time32[ms] as Paimon stores them."""

from __future__ import annotations

import datetime
import os

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import OptionError, SchemaChangeError, SchemaMismatchError
from lakestore.format.types import DataType, from_arrow
from lakestore.meta.schema_change import AddColumn, RenameColumn, SetOption

ID = pa.field("id", pa.int64(), nullable=False)


def schema(*extra: tuple[str, pa.DataType] | pa.Field) -> pa.Schema:
    return pa.schema([ID, ("v", pa.int64()), ("s", pa.string()), ("dt", pa.string()), *extra])


@pytest.fixture
def catalog(tmp_path) -> lakestore.Catalog:
    cat = lakestore.Catalog(str(tmp_path))
    cat.create_database("db")
    return cat


PU = {"merge-engine": "partial-update"}

# (case, extra columns, primary keys, options, error, text the message must contain); every one
# refused by Paimon 2.0.0 Java (each was checked against it when written)
REFUSED = [
    ("first-row-sequence-field", (), ["id"], {"merge-engine": "first-row", "sequence.field": "v"}, OptionError, "sequence.field"),
    ("first-row-input", (), ["id"], {"merge-engine": "first-row", "changelog-producer": "input"}, OptionError, "changelog-producer"),
    (
        "first-row-full-compaction",
        (),
        ["id"],
        {"merge-engine": "first-row", "changelog-producer": "full-compaction"},
        OptionError,
        "changelog-producer",
    ),
    (
        "snapshot-min-above-max",
        (),
        ["id"],
        {"snapshot.num-retained.min": "5", "snapshot.num-retained.max": "2"},
        OptionError,
        "snapshot.num-retained.min",
    ),
    ("snapshot-max-below-default-min", (), ["id"], {"snapshot.num-retained.max": "5"}, OptionError, "snapshot.num-retained.max"),
    ("changelog-max-below-default-min", (), ["id"], {"changelog.num-retained.max": "5"}, OptionError, "changelog.num-retained.max"),
    (
        "changelog-min-above-max",
        (),
        ["id"],
        {"changelog.num-retained.min": "5", "changelog.num-retained.max": "3"},
        OptionError,
        "changelog",
    ),
    (
        "changelog-min-above-snapshot-max",
        (),
        ["id"],
        {"changelog.num-retained.min": "20", "snapshot.num-retained.max": "15"},
        OptionError,
        "changelog.num-retained.min",
    ),
    ("column-_SEQUENCE_NUMBER", (("_SEQUENCE_NUMBER", pa.int64()),), ["id"], {}, SchemaMismatchError, "_SEQUENCE_NUMBER"),
    ("column-_VALUE_KIND", (("_VALUE_KIND", pa.int8()),), ["id"], {}, SchemaMismatchError, "_VALUE_KIND"),
    ("column-_LEVEL", (("_LEVEL", pa.int32()),), ["id"], {}, SchemaMismatchError, "_LEVEL"),
    ("column-rowkind", (("rowkind", pa.string()),), ["id"], {}, SchemaMismatchError, "rowkind"),
    ("column-_ROW_ID", (("_ROW_ID", pa.int64()),), ["id"], {}, SchemaMismatchError, "_ROW_ID"),
    ("column-_KEY_v", (("_KEY_v", pa.int64()),), ["id"], {}, SchemaMismatchError, "_KEY_v"),
    ("append-column-_SEQUENCE_NUMBER", (("_SEQUENCE_NUMBER", pa.int64()),), [], {}, SchemaMismatchError, "_SEQUENCE_NUMBER"),
    ("append-column-_KEY_x", (("_KEY_x", pa.int64()),), [], {}, SchemaMismatchError, "_KEY_x"),
    (
        "append-unaware-full-compaction-delta-commits",
        (),
        [],
        {"full-compaction.delta-commits": "2"},
        OptionError,
        "full-compaction.delta-commits",
    ),
    (
        "lookup-full-compaction-delta-commits",
        (),
        ["id"],
        {"full-compaction.delta-commits": "2", "changelog-producer": "lookup"},
        OptionError,
        "full-compaction.delta-commits",
    ),
    ("fields-option-unknown-column", (), ["id"], {"fields.nope.ignore-retract": "true"}, OptionError, "fields.nope.ignore-retract"),
    ("fields-stats-mode-unknown-column", (), ["id"], {"fields.nope.stats-mode": "none"}, OptionError, "nope"),
    (
        "aggregate-on-sequence-field",
        (),
        ["id"],
        {"sequence.field": "v", "fields.v.aggregate-function": "sum"},
        OptionError,
        "sequence.field",
    ),
    ("sequence-field-repeated", (), ["id"], {"sequence.field": "v,v"}, OptionError, "sequence.field"),
    ("record-time-field-string", (), ["id"], {"record-level.time-field": "s"}, OptionError, "record-level.time-field"),
    (
        "record-time-field-missing",
        (),
        ["id"],
        {"record-level.expire-time": "1 d", "record-level.time-field": "x"},
        OptionError,
        "record-level.time-field",
    ),
    ("scan-snapshot-and-tag", (), ["id"], {"scan.snapshot-id": "1", "scan.tag-name": "t"}, OptionError, "scan.tag-name"),
    ("scan-latest-with-snapshot", (), ["id"], {"scan.mode": "latest", "scan.snapshot-id": "1"}, OptionError, "scan.snapshot-id"),
    ("scan-from-snapshot-without-id", (), ["id"], {"scan.mode": "from-snapshot"}, OptionError, "scan.snapshot-id"),
    ("scan-version-alone", (), ["id"], {"scan.version": "1"}, OptionError, "scan.mode"),
    ("scan-timestamp-with-snapshot", (), ["id"], {"scan.timestamp-millis": "1", "scan.snapshot-id": "1"}, OptionError, "scan.snapshot-id"),
    (
        "scan-incremental-with-snapshot",
        (),
        ["id"],
        {"incremental-between": "1,2", "scan.snapshot-id": "1"},
        OptionError,
        "incremental-between",
    ),
    ("row-tracking-primary-key", (), ["id"], {"row-tracking.enabled": "true"}, OptionError, "row-tracking.enabled"),
    (
        "row-tracking-fixed-bucket",
        (),
        [],
        {"row-tracking.enabled": "true", "bucket": "2", "bucket-key": "v"},
        OptionError,
        "row-tracking.enabled",
    ),
    ("data-evolution-without-row-tracking", (), [], {"data-evolution.enabled": "true"}, OptionError, "data-evolution.enabled"),
    ("sequence-group-unknown-column", (), ["id"], {**PU, "fields.nope.sequence-group": "s"}, OptionError, "nope"),
    ("sequence-group-unknown-member", (), ["id"], {**PU, "fields.v.sequence-group": "nope"}, OptionError, "nope"),
    ("sequence-group-primary-key", (), ["id"], {**PU, "fields.v.sequence-group": "id"}, OptionError, "'id'"),
    (
        "sequence-group-member-twice",
        (("w", pa.int64()),),
        ["id"],
        {**PU, "fields.v.sequence-group": "s", "fields.w.sequence-group": "s"},
        OptionError,
        "'s'",
    ),
    ("partial-update-aggregate-without-group", (), ["id"], {**PU, "fields.s.aggregate-function": "max"}, OptionError, "'s'"),
    (
        "partial-update-remove-on-delete-and-ignore-delete",
        (),
        ["id"],
        {**PU, "partial-update.remove-record-on-delete": "true", "ignore-delete": "true"},
        OptionError,
        "ignore-delete",
    ),
    (
        "partial-update-remove-on-delete-and-sequence-group",
        (),
        ["id"],
        {**PU, "partial-update.remove-record-on-delete": "true", "fields.v.sequence-group": "s"},
        OptionError,
        "partial-update.remove-record-on-delete",
    ),
    (
        "deletion-vectors-full-compaction-changelog",
        (),
        ["id"],
        {"deletion-vectors.enabled": "true", "changelog-producer": "full-compaction"},
        OptionError,
        "deletion-vectors.enabled",
    ),
    ("deletion-vectors-first-row", (), ["id"], {"deletion-vectors.enabled": "true", "merge-engine": "first-row"}, OptionError, "first-row"),
]


@pytest.mark.parametrize(("extra", "primary_keys", "options", "error", "named"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_create_table_refuses_what_paimon_refuses(catalog, extra, primary_keys, options, error, named):
    opts = {"bucket": "1", **options} if primary_keys and "bucket" not in options else options
    with pytest.raises(error) as info:
        catalog.create_table("db.t", schema=schema(*extra), primary_keys=primary_keys, options=opts)
    assert named in str(info.value)
    assert not catalog.table_exists("db.t")
    assert not os.path.exists(os.path.join(catalog.warehouse, "db.db", "t", "schema"))


@pytest.mark.parametrize(
    ("extra", "primary_keys", "options"),
    [
        ((), ["id"], {"merge-engine": "first-row", "changelog-producer": "lookup"}),
        ((("_key_v", pa.int64()), ("ROWKIND", pa.string()), ("_sequence_number", pa.int64())), ["id"], {}),  # case-sensitive
        ((), [], {"full-compaction.delta-commits": "2", "bucket": "2", "bucket-key": "v"}),
        ((), ["id"], {"scan.snapshot-id": "1"}),
        ((), ["id"], {"snapshot.num-retained.min": "3", "snapshot.num-retained.max": "3", "changelog.num-retained.max": "3"}),
        ((), ["id"], {"record-level.expire-time": "1 d", "record-level.time-field": "v"}),
        (
            (),
            ["id"],
            {
                **PU,
                "fields.v.sequence-group": "s",
                "fields.s.aggregate-function": "max",
                "fields.dt.aggregate-function": "last_non_null_value",
            },
        ),
        ((), ["id"], {"merge-engine": "aggregation", "fields.default-aggregate-function": "max"}),
    ],
    ids=[
        "first-row-lookup",
        "system-names-in-other-case",
        "append-fixed-full-compaction",
        "scan-snapshot-id",
        "retained-equal",
        "record-time-bigint",
        "sequence-group-aggregate",
        "default-aggregate",
    ],
)
def test_create_table_accepts_what_paimon_accepts(catalog, extra, primary_keys, options):
    opts = {"bucket": "1", **options} if primary_keys and "bucket" not in options else options
    catalog.create_table("db.t", schema=schema(*extra), primary_keys=primary_keys, options=opts)
    assert catalog.table_exists("db.t")


def test_duplicate_key_columns_are_refused(catalog):
    with pytest.raises(SchemaMismatchError, match="more than once"):
        catalog.create_table("db.t", schema=schema(), primary_keys=["id", "id"], options={"bucket": "1"})
    with pytest.raises(SchemaMismatchError, match="more than once"):
        catalog.create_table("db.t", schema=schema(), primary_keys=["id", "dt"], partition_keys=["dt", "dt"], options={"bucket": "1"})
    assert not catalog.table_exists("db.t")


@pytest.mark.parametrize(
    ("options", "change", "named"),
    [
        ({}, RenameColumn("v", "_SEQUENCE_NUMBER"), "_SEQUENCE_NUMBER"),
        ({}, AddColumn("_KEY_id", pa.int64()), "_KEY_id"),
        ({}, AddColumn("rowkind", pa.string()), "rowkind"),
        ({}, SetOption("snapshot.num-retained.max", "2"), "snapshot.num-retained.max"),
        ({"snapshot.num-retained.max": "20"}, SetOption("snapshot.num-retained.min", "30"), "snapshot.num-retained.min"),
        ({"merge-engine": "first-row"}, SetOption("changelog-producer", "input"), "changelog-producer"),
        ({}, SetOption("fields.nope.ignore-retract", "true"), "nope"),
        ({"sequence.field": "v"}, SetOption("fields.v.aggregate-function", "sum"), "sequence.field"),
        ({"changelog-producer": "lookup"}, SetOption("full-compaction.delta-commits", "3"), "full-compaction.delta-commits"),
        ({}, SetOption("scan.mode", "from-snapshot"), "scan.mode"),
    ],
    ids=[
        "rename-to-system-field",
        "add-key-prefixed",
        "add-rowkind",
        "max-below-min",
        "min-above-max",
        "first-row-input",
        "unknown-column",
        "aggregate-sequence",
        "lookup-delta-commits",
        "from-snapshot",
    ],
)
def test_alter_table_refuses_what_paimon_refuses(catalog, options, change, named):
    catalog.create_table("db.t", schema=schema(), primary_keys=["id"], options={"bucket": "1", **options})
    before = catalog.get_table("db.t").schema
    with pytest.raises(SchemaChangeError) as info:
        catalog.alter_table("db.t", [change])
    assert named in str(info.value)
    after = catalog.get_table("db.t").schema
    assert after.id == before.id and after.field_names == before.field_names and dict(after.options) == dict(before.options)


def test_alter_table_passes_what_paimon_passes(catalog):
    catalog.create_table("db.t", schema=schema(), primary_keys=["id"], options={"bucket": "1"})
    table = catalog.alter_table(
        "db.t", [SetOption("snapshot.num-retained.min", "2"), SetOption("snapshot.num-retained.max", "2"), RenameColumn("v", "_v")]
    )
    assert table.schema.options["snapshot.num-retained.max"] == "2"
    assert "_v" in table.schema.field_names


# -- TIME -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arrow_type", "precision"),
    [(pa.time32("s"), 0), (pa.time32("ms"), 3), (pa.time64("us"), 6), (pa.time64("ns"), 9)],
)
def test_arrow_time_maps_to_paimon_time(arrow_type, precision):
    dtype = from_arrow(arrow_type, nullable=False)
    assert dtype == DataType("TIME", False, precision=precision)
    assert dtype.to_paimon() == f"TIME({precision}) NOT NULL"
    assert dtype.to_arrow() == pa.time32("ms")  # Paimon keeps milliseconds of the day for every p


def test_time_column_created_written_and_read(catalog):
    arrow = pa.schema([ID, ("t", pa.time32("ms")), ("t6", pa.time64("us"))])
    table = catalog.create_table("db.t", schema=arrow, primary_keys=["id"], options={"bucket": "1"})
    assert [str(f.type) for f in table.schema.fields] == ["BIGINT NOT NULL", "TIME(3)", "TIME(6)"]
    values = [datetime.time(0, 0), datetime.time(23, 59, 59, 999000), None]
    data = pa.table({"id": [1, 2, 3], "t": pa.array(values, pa.time32("ms")), "t6": pa.array(values, pa.time64("us"))})
    table.write_arrow(data)
    got = catalog.get_table("db.t").to_arrow().sort_by("id")
    assert got.schema.field("t").type == pa.time32("ms") and got.schema.field("t6").type == pa.time32("ms")
    assert got["t"].to_pylist() == values and got["t6"].to_pylist() == values


def test_sub_millisecond_time_is_refused_not_truncated(catalog):
    arrow = pa.schema([ID, ("t", pa.time64("us"))])
    table = catalog.create_table("db.t", schema=arrow, primary_keys=["id"], options={"bucket": "1"})
    with pytest.raises(SchemaMismatchError, match="'t'"):
        table.write_arrow(pa.table({"id": [1], "t": pa.array([datetime.time(1, 2, 3, 4001)], pa.time64("us"))}))
    assert table.to_arrow().num_rows == 0
