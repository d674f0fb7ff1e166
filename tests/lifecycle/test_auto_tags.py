"""Automatic tags, tag expiration and consumer expiration as Paimon 2.0 documents and implements
them (TagPeriodHandler / TagPeriodHandlerTest, TagAutoCreation, TagTimeExtractor, TagTimeExpire,
ConsumerManager.expire); the names Paimon's committer gives are compared with Paimon Java in
tests/interop/test_java_maintenance_options.py."""

from __future__ import annotations

import datetime as dt
import json
import os
import time

import pytest

from lakestore.errors import OptionError
from lakestore.lifecycle import expire_snapshots
from lakestore.lifecycle.expire import expire_consumers
from lakestore.lifecycle.tags import TagPeriod, tag_period
from lakestore.meta.consumer import ConsumerManager
from lakestore.meta.options import CoreOptions
from lakestore.meta.schema_change import SetOption
from tests.lifecycle.conftest import SCHEMA, batch

T = dt.datetime(2023, 1, 1, 1, 1)


@pytest.mark.parametrize(
    ("period", "formatter", "name", "other_format"),
    [
        ("daily", "with_dashes", "2023-01-01", "20230101"),
        ("daily", "without_dashes", "20230101", "2023-01-01"),
        ("daily", "without_dashes_and_spaces", "20230101", "2023-01-01"),
        ("hourly", "with_dashes", "2023-01-01 01", "20230101 01"),
        ("hourly", "without_dashes", "20230101 01", "2023-01-01 01"),
        ("hourly", "without_dashes_and_spaces", "2023010101", "20230101 01"),
        ("two-hours", "without_dashes", "2023-01-01 01", "20230101 01"),  # always with dashes
    ],
)
def test_period_names(period, formatter, name, other_format):
    handler = TagPeriod.of(period, formatter)
    start = T.replace(minute=0) if period != "daily" else T.replace(hour=0, minute=0)
    assert handler.time_to_tag(start) == name
    assert handler.tag_to_time(name) == start
    assert handler.tag_to_time(other_format) is None
    assert handler.tag_to_time("release-1") is None


def test_period_duration_names():
    handler = TagPeriod.of("daily", "with_dashes", duration_ms=5 * 60_000)
    assert handler.time_to_tag(T) == "202301010101"
    assert handler.tag_to_time("202301010101") == T
    assert handler.tag_to_time("20230101 0101") is None
    # periods count from 1970-01-01 00:00: 01:01 is in [01:00, 01:05); the tag is the one before
    assert handler.previous_period(T) == dt.datetime(2023, 1, 1, 0, 55)


def test_daily_names_ignore_a_time_part():
    assert TagPeriod.of("daily").tag_to_time("2023-01-01 13") == dt.datetime(2023, 1, 1)


def test_previous_period():
    assert TagPeriod.of("daily").previous_period(dt.datetime(2023, 1, 2, 10)) == dt.datetime(2023, 1, 1)
    assert TagPeriod.of("hourly").previous_period(dt.datetime(2023, 1, 2, 10, 59)) == dt.datetime(2023, 1, 2, 9)
    assert TagPeriod.of("two-hours").previous_period(dt.datetime(2023, 1, 2, 11, 59)) == dt.datetime(2023, 1, 2, 8)


def test_delay_must_be_shorter_than_a_period():
    options = CoreOptions({"tag.creation-period": "hourly", "tag.creation-delay": "1 h"}, has_primary_key=False)
    with pytest.raises(OptionError):
        tag_period(options)
    options = CoreOptions({"tag.creation-period": "hourly", "tag.creation-delay": "59 min"}, has_primary_key=False)
    assert tag_period(options).period_ms == 3_600_000


def tag_map(table) -> dict[str, int]:
    return {t.name: t.snapshot_id for t in table.manage.tags()}


def test_watermark_tags_follow_the_watermark(catalog):
    """``tag.automatic-creation=watermark`` (WatermarkExtractor, ``sink.watermark-time-zone`` UTC
    by default): a snapshot's watermark, not its commit time, places it; snapshots without a
    watermark are skipped. (Paimon's Java oracle commits no watermark.)"""
    options = {"bucket": "1", "tag.automatic-creation": "watermark", "tag.creation-period": "hourly"}
    table = catalog.create_table("db.w", schema=SCHEMA, primary_keys=["dt", "id"], options=options)
    hour0 = 1_700_006_400_000  # 2023-11-15 00:00 UTC
    table.write_arrow(batch("a", [1], 1.0))  # no watermark: no tag
    assert table.manage.tags() == []
    table.write_arrow(batch("a", [2], 1.0), watermark=hour0 + 30 * 60_000)  # 00:30: the hour before
    table.write_arrow(batch("a", [3], 1.0), watermark=hour0 + 50 * 60_000)  # 00:50 < 00:00 + 1 h: no tag
    table.write_arrow(batch("a", [4], 1.0), watermark=hour0 + 90 * 60_000)  # 01:30 >= 01:00: tags 00:00
    table.write_arrow(batch("a", [5], 1.0), watermark=hour0 + 125 * 60_000)  # 02:05 >= 02:00: tags 01:00
    assert tag_map(table) == {"2023-11-14 23": 2, "2023-11-15 00": 4, "2023-11-15 01": 5}
    catalog.alter_table("db.w", [SetOption("sink.watermark-time-zone", "GMT+08:00")])
    table = catalog.get_table("db.w")
    for tag in list(tag_map(table)):
        table.manage.delete_tag(tag)
    # the 5th write's compaction committed snapshot 6 (COMPACT, the same watermark): the next write is 7
    table.write_arrow(batch("a", [6], 1.0), watermark=hour0 + 180 * 60_000)  # 03:00 UTC = 11:00 at +08:00
    assert tag_map(table) == {"2023-11-15 07": 2, "2023-11-15 08": 4, "2023-11-15 09": 5, "2023-11-15 10": 7}


def test_tag_time_expire_enabled(catalog):
    """``tag.time-expire-enabled=false``: tags outliving ``tagTimeRetained`` stay."""
    table = catalog.create_table("db.t", schema=SCHEMA, options={"tag.time-expire-enabled": "false"})
    table.write_arrow(batch("a", [1], 1.0))
    table.manage.create_tag("short", time_retained="1 ms")
    time.sleep(0.01)
    assert expire_snapshots(table.store).expired_tags == ()
    assert [t.name for t in table.manage.tags()] == ["short"]
    other = catalog.create_table("db.u", schema=SCHEMA)
    other.write_arrow(batch("a", [1], 1.0))
    other.manage.create_tag("short", time_retained="1 ms")
    time.sleep(0.01)
    assert expire_snapshots(other.store).expired_tags == ("short",)


def test_consumer_expiration(catalog):
    """A consumer file not rewritten within ``consumer.expiration-time`` is deleted and stops
    protecting snapshots; without the option consumers never expire."""
    table = catalog.create_table("db.t", schema=SCHEMA, options={"consumer.expiration-time": "1 h", "consumer.mode": "at-least-once"})
    for i in range(4):
        table.write_arrow(batch("a", [i], 1.0))
    table.manage.reset_consumer("old", 1)
    table.manage.reset_consumer("new", 3)
    path = f"{table.store.metadata_path}/consumer/consumer-old"
    stale = time.time() - 2 * 3600
    os.utime(path, (stale, stale))
    assert json.loads(open(path).read()) == {"nextSnapshot": 1}
    result = expire_snapshots(table.store, num_retained_min=1, time_retained_ms=0)
    assert table.manage.consumers() == {"new": 3}
    assert result.earliest_snapshot_id == 3
    # re-recording a consumer refreshes it
    table.manage.reset_consumer("new", 4)
    assert expire_consumers(table.store) == ()
    assert ConsumerManager(table.store.file_io, table.store.metadata_path).expire(int(time.time() * 1000) + 1000) == ["new"]

    keep = catalog.create_table("db.k", schema=SCHEMA)
    keep.write_arrow(batch("a", [1], 1.0))
    keep.manage.reset_consumer("old", 1)
    os.utime(f"{keep.store.metadata_path}/consumer/consumer-old", (stale, stale))
    assert expire_consumers(keep.store) == ()
    assert keep.manage.consumers() == {"old": 1}


def test_consumer_mode_values(catalog):
    for mode in ("exactly-once", "at-least-once"):
        catalog.create_table(f"db.{mode.replace('-', '_')}", schema=SCHEMA, options={"consumer.mode": mode})
    with pytest.raises(OptionError):
        catalog.create_table("db.bad", schema=SCHEMA, options={"consumer.mode": "sometimes"})


def test_a_table_resumes_its_walk(catalog, monkeypatch):
    """As Paimon's committer keeps its position in memory, a Table walks each snapshot once; a new
    Table restores the position from the latest automatic tag."""
    options = {"bucket": "1", "tag.automatic-creation": "process-time", "tag.creation-period": "daily"}
    table = catalog.create_table("db.r", schema=SCHEMA, primary_keys=["dt", "id"], options=options)
    for i in range(4):
        table.write_arrow(batch("a", [i], 1.0))
    assert [t.snapshot_id for t in table.manage.tags()] == [1]
    seen: list[int] = []
    get = type(table.store.snapshot_manager).get

    def counting(self, snapshot_id, *args, **kwargs):
        seen.append(snapshot_id)
        return get(self, snapshot_id, *args, **kwargs)

    monkeypatch.setattr(type(table.store.snapshot_manager), "get", counting)
    table.write_arrow(batch("a", [9], 1.0))
    assert 2 not in seen and 3 not in seen and 5 in seen  # the walk looked at the new snapshot only
    seen.clear()
    from lakestore.lifecycle import auto_create_tags

    auto_create_tags(catalog.get_table("db.r").store)
    assert {2, 3, 4, 5} <= set(seen)  # restored from the tag on snapshot 1


def test_write_only_tables_get_no_automatic_tags(catalog):
    """Paimon's committer of a ``write-only`` table has no TagAutoManager."""
    options = {"bucket": "1", "write-only": "true", "tag.automatic-creation": "process-time"}
    table = catalog.create_table("db.wo", schema=SCHEMA, primary_keys=["dt", "id"], options=options)
    table.write_arrow(batch("a", [1], 1.0))
    assert table.manage.tags() == []
