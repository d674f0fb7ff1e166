"""Consumers (``consumer/consumer-<id>``): a streaming reader's persisted position,
``{"nextSnapshot": N}``. Expiration keeps snapshot N and everything after it."""

from __future__ import annotations

import json
import re

from lakestore.errors import CorruptMetadataError, InvalidIdentifierError
from lakestore.io.fileio import FileIO

_ID = re.compile(r"^[A-Za-z0-9_.\-]+$")


class ConsumerManager:
    def __init__(self, file_io: FileIO, table_path: str) -> None:
        self.file_io = file_io
        self.directory = f"{table_path}/consumer"

    def path(self, consumer_id: str) -> str:
        if not _ID.match(consumer_id):
            raise InvalidIdentifierError(f"invalid consumer id {consumer_id!r}")
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
