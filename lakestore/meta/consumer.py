"""Consumers (``consumer/consumer-<id>``): a streaming reader's persisted position,
``{"nextSnapshot": N}``. Expiration keeps snapshot N and everything after it.

``consumer.expiration-time``: a consumer file not rewritten within it is deleted before snapshot
expiration and stops protecting snapshots (Paimon's ConsumerManager.expire, by the file's
modification time). ``consumer.mode`` (exactly-once, at-least-once) says which position Paimon's
parallel Flink readers record; lakestore's one reader records a snapshot once all its changes were
returned, which is the exactly-once position and satisfies at-least-once as well.

Paimon Java rewrites a consumer file in place (``overwriteFileUtf8``: truncate, then write), so a
reader can meet it empty or cut short while a Flink job moves its position. Expiration must not
take that for "no consumer": ``min_next_snapshot`` reads such a file again, as Paimon's
``Consumer.fromPath`` does (10 reads, 200 ms apart), and raises if it never parses."""

from __future__ import annotations

import json
import re
import time

from lakestore.errors import CorruptMetadataError, InvalidIdentifierError
from lakestore.io.fileio import FileIO
from lakestore.meta.names import check_name

_ID = re.compile(r"[A-Za-z0-9_.\-]+")
READ_ATTEMPTS = 10  # Paimon's Consumer.fromPath
READ_INTERVAL_S = 0.2


class ConsumerManager:
    def __init__(self, file_io: FileIO, table_path: str) -> None:
        self.file_io = file_io
        self.directory = f"{table_path}/consumer"

    def path(self, consumer_id: str) -> str:
        check_name(consumer_id, "consumer", pattern=_ID, prefix="consumer-")
        return f"{self.directory}/consumer-{consumer_id}"

    def next_snapshot(self, consumer_id: str) -> int | None:
        path = self.path(consumer_id)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError:
            return None
        try:
            value = json.loads(data)["nextSnapshot"]
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError("nextSnapshot is not an integer")
            return value
        except (ValueError, KeyError, TypeError) as exc:
            raise CorruptMetadataError(path, f"invalid consumer file: {exc!r}") from exc

    def next_snapshot_settled(self, consumer_id: str) -> int | None:
        """``next_snapshot``, reading a file that does not parse again (a writer may be rewriting
        it in place) up to ``READ_ATTEMPTS`` times. Raises ``CorruptMetadataError`` if it never
        parses; None if the file is gone."""
        for attempt in range(READ_ATTEMPTS):
            try:
                return self.next_snapshot(consumer_id)
            except CorruptMetadataError:
                if attempt == READ_ATTEMPTS - 1:
                    raise
                time.sleep(READ_INTERVAL_S)
        raise AssertionError("unreachable")

    def min_next_snapshot(self) -> int | None:
        """The smallest ``nextSnapshot`` of all consumers (None: no consumer): snapshots from
        there on are still to be read and must not expire. A consumer file being rewritten is
        read again until it parses (``CorruptMetadataError`` if it never does): skipping it
        would let expiration delete what its reader reads next."""
        lowest: int | None = None
        for name in self.file_io.list_names(self.directory):
            if not name.startswith("consumer-"):
                continue
            try:
                value = self.next_snapshot_settled(name[len("consumer-") :])
            except InvalidIdentifierError:
                continue  # not a consumer Paimon could have written
            if value is not None:
                lowest = value if lowest is None else min(lowest, value)
        return lowest

    def record(self, consumer_id: str, next_snapshot: int) -> None:
        self.file_io.write_bytes(self.path(consumer_id), json.dumps({"nextSnapshot": next_snapshot}).encode())

    def delete(self, consumer_id: str) -> None:
        self.file_io.delete(self.path(consumer_id))

    def consumers(self) -> dict[str, int]:
        out = {}
        for name in self.file_io.list_names(self.directory):
            if name.startswith("consumer-"):
                try:
                    value = self.next_snapshot(name[len("consumer-") :])
                except (CorruptMetadataError, InvalidIdentifierError):
                    continue
                if value is not None:
                    out[name[len("consumer-") :]] = value
        return out

    def expire(self, older_than_ms: int) -> list[str]:
        """Delete the consumers whose file was last written before ``older_than_ms``; returns their ids."""
        expired = []
        for status in self.file_io.list_status(self.directory):
            name = status.path.rstrip("/").rsplit("/", 1)[-1]
            if status.is_dir or not name.startswith("consumer-") or status.mtime_ms >= older_than_ms:
                continue
            self.file_io.delete(f"{self.directory}/{name}")
            expired.append(name[len("consumer-") :])
        return expired
