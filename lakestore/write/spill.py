"""The spillable write buffer: when a write's buffers fill ``write-buffer-size``, the buffered
rows of every bucket go to ONE local spill file (Arrow IPC file, uncompressed) instead of
becoming one small level-0 file per bucket, and each bucket writes one sorted run per commit
from its spilled pieces and what is still in memory (Paimon 2.0's ``write-buffer-spillable``,
default true, does the same with its sort buffers).

A piece is a bucket's rows in a block of a spill file; blocks are read back with positioned reads,
never mapped, so spilled data counts against the page cache, not the process's memory."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from dataclasses import dataclass

import pyarrow as pa

# A spill file holds blocks of about this many bytes, each the rows of consecutive buckets: few
# IPC batches to write and read, and a block read once serves every bucket in it.
BLOCK_BYTES = 1 << 20
# Blocks a spill file keeps after a read for the next buckets' pieces (buckets commit in the
# order they spilled, so the next piece is nearly always in a kept block).
KEPT_BLOCKS = 3


@dataclass(frozen=True, slots=True)
class SpillPiece:
    """One bucket's rows in a spill file: rows [offset, offset + rows) of block ``block``."""

    file: SpillFile
    block: int
    offset: int
    rows: int

    def read(self) -> pa.Table:
        return self.file.read(self.block, self.offset, self.rows)


class SpillFile:
    """An Arrow IPC file of blocks (record batches) of one schema, written once, then read block
    by block with positioned reads (the footer locates every block), never mapped. A block stays
    cached until every piece in it has been read, or it is one of the ``KEPT_BLOCKS`` least
    recently read."""

    def __init__(self, path: str, schema: pa.Schema, pieces_per_block: list[int]) -> None:
        self.path = path
        self.schema = schema
        self._unread = list(pieces_per_block)
        self._cache: dict[int, pa.RecordBatch] = {}
        self._reader: pa.ipc.RecordBatchFileReader | None = None
        self._source: pa.NativeFile | None = None
        self._lock = threading.Lock()

    def read(self, block: int, offset: int, rows: int) -> pa.Table:
        with self._lock:  # one reader and cache, shared by the bucket writers' threads
            batch = self._cache.pop(block, None)
            if batch is None:
                if self._reader is None:
                    self._source = pa.OSFile(self.path, "rb")
                    self._reader = pa.ipc.open_file(self._source)
                batch = self._reader.get_batch(block)
            self._unread[block] -= 1
            if self._unread[block] > 0:
                self._cache[block] = batch  # most recently read last
                while len(self._cache) > KEPT_BLOCKS:
                    del self._cache[next(iter(self._cache))]
        return pa.Table.from_batches([batch.slice(offset, rows)], schema=self.schema)

    def close(self) -> None:
        with self._lock:
            self._cache.clear()
            self._reader = None
            if self._source is not None:
                self._source.close()
                self._source = None


class Spiller:
    """The spill files of one ``TableWrite``, in a private temporary directory (made on first
    spill, under ``TMPDIR``); ``release`` deletes them once the buckets have read their pieces."""

    def __init__(self) -> None:
        self._directory: str | None = None
        self._files: list[SpillFile] = []

    def spill(self, chunks: list[list[pa.Table]], sizes: list[int]) -> list[SpillPiece]:
        """Write each bucket's buffered tables (``chunks[i]``, in arrival order, ``sizes[i]``
        bytes in memory) into one spill file per schema, consecutive buckets packed into blocks
        of ~``BLOCK_BYTES``; return bucket i's piece at position i."""
        if self._directory is None:
            self._directory = tempfile.mkdtemp(prefix="lakestore-spill-")
        out: list[SpillPiece | None] = [None] * len(chunks)
        by_schema: dict[pa.Schema, list[int]] = {}
        for i, tables in enumerate(chunks):
            by_schema.setdefault(tables[0].schema, []).append(i)
        for schema, positions in by_schema.items():
            # blocks: [(bucket positions, their tables)], each ~BLOCK_BYTES
            blocks: list[list[int]] = [[]]
            size = 0
            for i in positions:
                if size >= BLOCK_BYTES:
                    blocks.append([])
                    size = 0
                blocks[-1].append(i)
                size += sizes[i]
            path = os.path.join(self._directory, f"spill-{len(self._files)}.arrow")
            spill_file = SpillFile(path, schema, [len(members) for members in blocks])
            self._files.append(spill_file)
            with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
                for number, members in enumerate(blocks):
                    tables = [t for i in members for t in chunks[i]]
                    block = pa.concat_tables(tables).combine_chunks() if len(tables) > 1 else tables[0].combine_chunks()
                    batches = block.to_batches()
                    writer.write_batch(batches[0] if batches else pa.RecordBatch.from_pylist([], schema=schema))
                    offset = 0
                    for i in members:
                        rows = sum(t.num_rows for t in chunks[i])
                        out[i] = SpillPiece(spill_file, number, offset, rows)
                        offset += rows
        assert all(piece is not None for piece in out)
        return out  # type: ignore[return-value]

    def release(self) -> None:
        """Delete every spill file (their pieces must not be read afterwards)."""
        for spill_file in self._files:
            spill_file.close()
        self._files = []
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None
