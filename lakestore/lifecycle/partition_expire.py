"""Partition expiration (Paimon's PartitionExpire with the values-time strategy): a partition
whose time, read from its values, is older than ``partition.expiration-time`` is dropped in one
OVERWRITE snapshot; snapshot expiration and orphan cleanup later reclaim its files.

The time comes from the first partition value, or from ``partition.timestamp-pattern`` with
``$key`` placeholders (``"$dt $hour:00:00"``), parsed with ``partition.timestamp-formatter`` (a
Java DateTimeFormatter pattern such as ``yyyyMMdd``) or, without one, as ``yyyy-MM-dd`` with an
optional ``HH:mm:ss``. Partitions whose values do not parse never expire.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lakestore.errors import OptionError
from lakestore.format.binary_row import decode_row
from lakestore.meta.file_scan import live_entries
from lakestore.meta.options import java_pattern_to_strptime
from lakestore.meta.partitions import check_partition_spec

if TYPE_CHECKING:
    from lakestore.meta.snapshot import Snapshot
    from lakestore.store import FileStore

_log = logging.getLogger(__name__)

_DEFAULT_FORMATS = ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d")


def partition_time(keys: Sequence[str], values: Sequence[Any], *, pattern: str | None, formatter: str | None) -> dt.datetime | None:
    """The time a partition stands for, or None when its values do not parse."""
    if pattern is None:
        text = str(values[0])
    else:
        text = pattern
        for key, value in zip(keys, values, strict=True):
            text = text.replace(f"${key}", str(value))
    formats = (java_pattern_to_strptime(formatter),) if formatter is not None else _DEFAULT_FORMATS
    for fmt in formats:
        try:
            return dt.datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


def expired_partitions(table: FileStore, snapshot: Snapshot | None, *, now: dt.datetime) -> list[dict[str, Any]]:
    """The partitions of ``snapshot`` whose time is before ``now - partition.expiration-time``."""
    options = table.options
    expiration_ms = options.partition_expiration_ms
    if expiration_ms is None or snapshot is None or not table.partition_keys:
        return []
    cutoff = now - dt.timedelta(milliseconds=expiration_ms)
    keys = table.partition_keys
    types = table.schema.types_of(keys)
    distinct = {entry.partition for entry in live_entries(table.manifests(), snapshot)}
    expired = []
    for partition in sorted(distinct):
        values = decode_row(partition, types)
        when = partition_time(keys, values, pattern=options.partition_timestamp_pattern, formatter=options.partition_timestamp_formatter)
        if when is None:
            _log.warning("partition %s of %s: cannot read a time from its values; it never expires", values, table.path)
        elif when < cutoff:
            expired.append(dict(zip(keys, values, strict=True)))
    return expired


def expire_partitions(table: FileStore, *, now_ms: int | None = None, commit_user: str | None = None) -> list[dict[str, Any]]:
    """Drop the expired partitions in one OVERWRITE snapshot; returns them (oldest first)."""
    table.schema.require_supported("expire partitions of", table=table.path)
    if table.options.partition_expiration_ms is None:
        raise OptionError(f"table {table.path} has no 'partition.expiration-time'")
    now = dt.datetime.fromtimestamp((now_ms if now_ms is not None else time.time() * 1000) / 1000)
    expired = expired_partitions(table, table.latest_snapshot(), now=now)
    if expired:
        # one OVERWRITE snapshot dropping them all (``Table.drop_partitions``)
        specs = [check_partition_spec(table.partition_keys, p, what="overwrite") for p in expired]
        table.new_commit(commit_user=commit_user or str(uuid.uuid4())).commit([], overwrite=specs)
    return expired


def partition_check_due(table: FileStore, last_check_ms: int | None, now_ms: int) -> bool:
    """Whether post-commit maintenance should look for expired partitions now."""
    if table.options.partition_expiration_ms is None:
        return False
    return last_check_ms is None or now_ms - last_check_ms >= table.options.partition_expiration_check_interval_ms
