"""Partition expiration: partitions whose time (read from their values) is older than
``partition.expiration-time`` are dropped in an OVERWRITE snapshot, after commits or on demand,
and their files are reclaimed once that snapshot's parent expires."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import OptionError
from lakestore.lifecycle.partition_expire import partition_time

# a time after every snapshot of the test session: time retention never protects them
LATER_MS = int(time.time() * 1000) + 86_400_000

FAR_FUTURE_MS = int(time.time() * 1000) + 10 * 86_400_000


def _ms(value: dt.datetime) -> int:
    return int(value.timestamp() * 1000)


@pytest.fixture
def catalog(tmp_path):
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db")
    return c


def _days(*days: str) -> pa.Table:
    return pa.table({"dt": list(days), "id": list(range(len(days))), "v": [1.0] * len(days)})


SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])


def test_old_partitions_are_dropped_and_their_files_reclaimed(catalog):
    table = catalog.create_table(
        "db.t",
        schema=SCHEMA,
        partition_keys=["dt"],
        primary_keys=["dt", "id"],
        options={"bucket": "1", "partition.expiration-time": "2 d", "partition.expiration-check-interval": "365 d"},
    )
    # the first commit's maintenance checks against the real clock: these days are in the future
    today = dt.date(2099, 6, 10)
    days = [(today - dt.timedelta(days=n)).isoformat() for n in (5, 3, 1, 0)]
    table.write_arrow(_days(*days))
    assert table.latest_snapshot().commit_kind == "APPEND"
    assert sorted(table.to_arrow()["dt"].to_pylist()) == sorted(days)
    now = dt.datetime.combine(today, dt.time(12))
    dropped = table.maintenance.expire_partitions(now_ms=_ms(now))
    assert dropped == [{"dt": days[0]}, {"dt": days[1]}]
    latest = table.latest_snapshot()
    assert latest.commit_kind == "OVERWRITE"
    assert sorted(table.to_arrow()["dt"].to_pylist()) == sorted(days[2:])
    assert table.to_arrow(snapshot_id=latest.id - 1).num_rows == 4  # time travel still sees them
    assert table.maintenance.expire_partitions(now_ms=_ms(now)) == []
    table.maintenance.expire_snapshots(num_retained_min=1, time_retained_ms=0, now_ms=LATER_MS)
    table.maintenance.remove_orphan_files(older_than_ms=FAR_FUTURE_MS)
    remaining = {p.parent.parent.name for p in Path(table.path).rglob("*.parquet")}
    assert remaining == {f"dt={d}" for d in days[2:]}


def test_expiration_runs_after_commits(catalog):
    table = catalog.create_table(
        "db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "1", "partition.expiration-time": "1 d"}
    )
    table.write_arrow(_days("2020-01-01", dt.date.today().isoformat()))
    kinds = [s.commit_kind for s in table.snapshots()]
    assert kinds == ["APPEND", "OVERWRITE"]
    assert table.to_arrow()["dt"].to_pylist() == [dt.date.today().isoformat()]


def test_pattern_and_formatter_over_several_partition_keys(catalog):
    schema = pa.schema([("day", pa.string()), ("hour", pa.int32()), ("id", pa.int64())])
    table = catalog.create_table(
        "db.t",
        schema=schema,
        partition_keys=["day", "hour"],
        options={
            "partition.expiration-time": "1 h",
            "partition.timestamp-pattern": "$day $hour:00:00",
            "partition.timestamp-formatter": "yyyyMMdd HH:mm:ss",
            "partition.expiration-check-interval": "365 d",
        },
    )
    table.write_arrow(pa.table({"day": ["20990101", "20990101", "20990102"], "hour": pa.array([8, 10, 9], pa.int32()), "id": [1, 2, 3]}))
    dropped = table.maintenance.expire_partitions(now_ms=_ms(dt.datetime(2099, 1, 1, 10, 30)))
    assert dropped == [{"day": "20990101", "hour": 8}]
    assert sorted(table.to_arrow()["id"].to_pylist()) == [2, 3]


def test_partition_time_reads_paimon_formats():
    assert partition_time(["dt"], ["2024-03-05"], pattern=None, formatter=None) == dt.datetime(2024, 3, 5)
    assert partition_time(["dt"], ["2024-03-05 07:08:09"], pattern=None, formatter=None) == dt.datetime(2024, 3, 5, 7, 8, 9)
    assert partition_time(["dt"], ["20240305"], pattern=None, formatter="yyyyMMdd") == dt.datetime(2024, 3, 5)
    assert partition_time(["a", "b"], ["2024", "03"], pattern="$a-$b-01", formatter=None) == dt.datetime(2024, 3, 1)
    assert partition_time(["dt"], ["not a date"], pattern=None, formatter=None) is None


def test_bad_expiration_options_are_refused_at_creation(catalog):
    with pytest.raises(OptionError, match="partition.timestamp-formatter"):
        catalog.create_table("db.a", schema=SCHEMA, partition_keys=["dt"], options={"partition.timestamp-formatter": "yyyy-MM-dd EEE"})
    with pytest.raises(OptionError, match="partition.expiration-strategy"):
        catalog.create_table("db.b", schema=SCHEMA, partition_keys=["dt"], options={"partition.expiration-strategy": "update-time"})
    table = catalog.create_table("db.c", schema=SCHEMA, partition_keys=["dt"])
    with pytest.raises(OptionError, match="partition.expiration-time"):
        table.maintenance.expire_partitions()


def test_drop_partitions_validates_keys(catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "1"})
    table.write_arrow(_days("2024-01-01", "2024-01-02"))
    with pytest.raises(lakestore.PartitionValueError):
        table.drop_partitions([{"nope": "x"}])
    assert table.latest_snapshot().id == 1
    table.drop_partitions([{"dt": "2024-01-01"}])
    assert table.to_arrow()["dt"].to_pylist() == ["2024-01-02"]
