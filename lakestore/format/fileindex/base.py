"""The contract of one file index: what a writer is fed and what a reader answers.

Paimon (``org.apache.paimon.fileindex``) keeps, per data file, one index per (column, index
type): ``bloom-filter``, ``bitmap`` or ``bsi``. All indexes of a file are packed into one blob
(``format.py``), embedded in the manifest entry (``_EMBEDDED_FILE_INDEX``) when it is small
enough (``file-index.in-manifest-threshold``), else written as ``<data-file>.index`` beside the
data file and named in ``_EXTRA_FILES``.

A writer is fed a column's values as Arrow arrays, in row order, every row of the file exactly
once (nulls included: their positions matter to bitmap indexes). A reader answers one leaf
predicate at a time with a :class:`FileIndexResult`: "no row can match" (the file is skipped),
"some rows may match" (read the file), or the row positions that may match (bitmap and bsi
indexes; the reader may narrow the rows it reads to them).

This module imports nothing above ``format``: the read layer translates its predicates into
these calls.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from lakestore.format.types import DataType


@dataclass(frozen=True)
class FileIndexResult:
    """What an index says about one leaf predicate over one data file.

    ``remain`` False: no row of the file can match. ``rows``: when not None, the sorted unique
    row positions (``uint32``/``int64`` NumPy array) that may match; None means any row may.
    """

    remain: bool
    rows: np.ndarray | None = None

    def and_(self, other: FileIndexResult) -> FileIndexResult:
        if not self.remain or not other.remain:
            return SKIP
        if self.rows is None:
            return other
        if other.rows is None:
            return self
        rows = np.intersect1d(self.rows, other.rows, assume_unique=True)
        return FileIndexResult(rows.size > 0, rows)

    def or_(self, other: FileIndexResult) -> FileIndexResult:
        if not self.remain:
            return other
        if not other.remain:
            return self
        if self.rows is None or other.rows is None:
            return REMAIN
        return FileIndexResult(True, np.union1d(self.rows, other.rows))


REMAIN = FileIndexResult(True)
SKIP = FileIndexResult(False)


class FileIndexWriter(ABC):
    """Builds one index over one column of one data file."""

    @abstractmethod
    def add(self, values: pa.Array) -> None:
        """Append the column's next rows (nulls included), in row order."""

    @abstractmethod
    def to_bytes(self) -> bytes:
        """The index, serialized byte for byte as Paimon Java's writer of this type would."""


class FileIndexReader:
    """Answers leaf predicates over one column of one data file. Every answer defaults to
    :data:`REMAIN` (the index does not know): a reader overrides what its type can decide.
    Literals are Python values of the column's type as lakestore's predicates carry them
    (``int``, ``str``, ``bytes``, ``decimal.Decimal``, ``datetime.date``/``datetime``...)."""

    def equal(self, value: Any) -> FileIndexResult:
        return REMAIN

    def not_equal(self, value: Any) -> FileIndexResult:
        return REMAIN

    def is_in(self, values: Sequence[Any]) -> FileIndexResult:
        result = SKIP
        for value in values:
            result = result.or_(self.equal(value))
            if result.remain and result.rows is None:
                return REMAIN
        return result

    def compare(self, op: str, value: Any) -> FileIndexResult:
        """``op`` one of ``<``, ``<=``, ``>``, ``>=``."""
        return REMAIN

    def is_null(self) -> FileIndexResult:
        return REMAIN

    def is_not_null(self) -> FileIndexResult:
        return REMAIN


class FileIndexType(ABC):
    """One index type (``bloom-filter``, ``bitmap``, ``bsi``): how to build and how to read it.

    ``options`` are the type's column options with the ``file-index.<type>.`` and
    ``file-index.<type>.<column>.`` prefixes removed (e.g. ``fpp``, ``items``, ``version``), as
    Paimon's ``FileIndexOptions`` hands them to its factories.
    """

    name: str

    @abstractmethod
    def supports(self, data_type: DataType) -> bool:
        """Whether Paimon can build this index over a column of this type."""

    @abstractmethod
    def writer(self, data_type: DataType, options: Mapping[str, str]) -> FileIndexWriter: ...

    @abstractmethod
    def reader(self, data_type: DataType, options: Mapping[str, str], data: bytes) -> FileIndexReader:
        """Read an index from its serialized bytes. Raises ``CorruptMetadataError`` when the
        bytes are not a valid index of this type (never for a valid index of a newer version:
        that raises ``UnsupportedTableError`` naming the version)."""
