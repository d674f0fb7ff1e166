"""The file index types lakestore implements, and which indexes a table's options give its files.

Paimon's options (``FileIndexOptions``): ``file-index.<type>.columns`` lists the columns indexed
with ``<type>``; ``file-index.<type>.<column>.<option>`` sets one option of one column's index;
``file-index.in-manifest-threshold`` (default 500 bytes) is the largest blob embedded in the
manifest entry (a larger one goes to ``<data-file>.index``); ``file-index.read.enabled`` (default
true) lets reads skip files by their indexes.

A type Paimon has but lakestore does not implement (:data:`PAIMON_TYPES` minus :data:`TYPES`) is
refused by name (``lakestore.meta.option_keys.file_index_refusal``) before anything is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pyarrow as pa

from lakestore.errors import OptionError
from lakestore.format.fileindex.base import FileIndexType, FileIndexWriter
from lakestore.format.fileindex.bitmap import BitmapIndexType
from lakestore.format.fileindex.bloom import BLOOM_FILTER
from lakestore.format.fileindex.bsi import BsiIndexType
from lakestore.format.fileindex.format import java_hash_order, write_file_index
from lakestore.format.types import DataType
from lakestore.units import parse_memory

PREFIX = "file-index."
COLUMNS_SUFFIX = ".columns"
THRESHOLD_KEY = "file-index.in-manifest-threshold"
READ_ENABLED_KEY = "file-index.read.enabled"
DEFAULT_THRESHOLD = 500

# Paimon 2.0.0's index types (META-INF/services of paimon-common: FileIndexerFactory)
PAIMON_TYPES = ("bloom-filter", "bitmap", "bsi", "range-bitmap")

# name -> the type lakestore implements; other modules add theirs with :func:`register`
TYPES: dict[str, FileIndexType] = {BLOOM_FILTER.name: BLOOM_FILTER, "bitmap": BitmapIndexType(), "bsi": BsiIndexType()}


def register(index_type: FileIndexType) -> None:
    """Make ``index_type`` known by its name (replacing one of the same name)."""
    TYPES[index_type.name] = index_type


def index_type(name: str) -> FileIndexType | None:
    return TYPES.get(name)


def key_type(key: str) -> str | None:
    """The index type a ``file-index.<type>.columns`` / ``file-index.<type>.<column>.<option>``
    key is about; None for the table-wide keys and anything else."""
    if not key.startswith(PREFIX) or key in (THRESHOLD_KEY, READ_ENABLED_KEY):
        return None
    rest = key[len(PREFIX) :]
    if key.endswith(COLUMNS_SUFFIX):
        return rest[: -len(COLUMNS_SUFFIX)] or None
    parts = rest.split(".")
    return parts[0] if len(parts) == 3 else None


@dataclass(frozen=True)
class ColumnIndex:
    """One index of one column: its type and the type's options (prefixes removed)."""

    column: str
    type_name: str
    options: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FileIndexOptions:
    """The indexes every data file of a table gets, and where their blob goes."""

    indexes: tuple[ColumnIndex, ...] = ()
    in_manifest_threshold: int = DEFAULT_THRESHOLD
    read_enabled: bool = True

    @property
    def empty(self) -> bool:
        return not self.indexes


def read_enabled(options: Mapping[str, str]) -> bool:
    """``file-index.read.enabled`` (default true). Raises ``OptionError`` for a non-boolean."""
    value = str(options.get(READ_ENABLED_KEY, "true")).strip().lower()
    if value not in ("true", "false"):
        raise OptionError(f"option {READ_ENABLED_KEY!r} must be 'true' or 'false', got {value!r}")
    return value == "true"


def file_index_options(options: Mapping[str, str], fields: Mapping[str, DataType], *, partial: bool = False) -> FileIndexOptions:
    """Parse a table's ``file-index.*`` options against its columns (``fields``: name -> type).
    ``partial``: ``fields`` are the columns of a file that holds only some of the table's (a
    data-evolution update): the indexes of the other columns are left out, not refused.

    Raises ``OptionError`` as Paimon's ``FileIndexOptions`` / ``DataFileIndexWriter`` refuse:
    an empty column name, an option for a column its type does not index, a column the table
    does not have; and for what lakestore does not implement: an index type other than
    :data:`TYPES`, an index over a map's entries (``<column>[<key>]``), a column type the index
    type does not support."""
    declared: dict[tuple[str, str], dict[str, str]] = {}
    extra: list[tuple[str, str]] = []
    for key, value in options.items():
        if not key.startswith(PREFIX) or key in (THRESHOLD_KEY, READ_ENABLED_KEY):
            continue
        if key.endswith(COLUMNS_SUFFIX):
            type_name = key[len(PREFIX) : -len(COLUMNS_SUFFIX)]
            for name in str(value).split(","):
                if not name.strip():
                    raise OptionError(f"option {key!r}: an empty column name in {value!r}")
                declared.setdefault((name.strip(), type_name), {})
        else:
            extra.append((key, str(value)))
    for key, value in extra:
        parts = key[len(PREFIX) :].split(".")
        if len(parts) != 3:
            continue  # Paimon ignores them too
        type_name, column, option = parts
        found = declared.get((column, type_name))
        if found is None:
            raise OptionError(f"option {key!r}: column {column!r} is not declared in '{PREFIX}{type_name}{COLUMNS_SUFFIX}'")
        found[option] = value
    indexes = []
    for (column, type_name), opts in declared.items():
        if "[" in column and column.endswith("]"):
            raise OptionError(f"file index over map entries ({column!r}) is not implemented")
        implementation = TYPES.get(type_name)
        if implementation is None:
            known = "a Paimon index type lakestore does not implement" if type_name in PAIMON_TYPES else "not an index type of Paimon"
            raise OptionError(f"option '{PREFIX}{type_name}{COLUMNS_SUFFIX}': {type_name!r} is {known}")
        data_type = fields.get(column)
        if data_type is None and partial:
            continue
        if data_type is None:
            raise OptionError(f"option '{PREFIX}{type_name}{COLUMNS_SUFFIX}': column {column!r} does not exist")
        if not implementation.supports(data_type):
            raise OptionError(f"a {type_name} index over column {column!r} of type {data_type} is not supported (as in Paimon)")
        implementation.writer(data_type, opts)  # options checked now, not at the first write
        indexes.append(ColumnIndex(column, type_name, dict(opts)))
    try:
        threshold = parse_memory(str(options.get(THRESHOLD_KEY, f"{DEFAULT_THRESHOLD} b")))
    except ValueError as exc:
        raise OptionError(f"option {THRESHOLD_KEY!r}: {exc}") from exc
    return FileIndexOptions(tuple(indexes), threshold, read_enabled(options))


class FileIndexBuilder:
    """Builds the blob of one data file from the Arrow batches written to it."""

    def __init__(self, spec: FileIndexOptions, fields: Mapping[str, DataType]) -> None:
        self.spec = spec
        self._writers: list[tuple[ColumnIndex, FileIndexWriter]] = [
            (ix, TYPES[ix.type_name].writer(fields[ix.column], ix.options)) for ix in spec.indexes
        ]

    def add(self, rows: pa.Table | pa.RecordBatch) -> None:
        """Feed the next rows of the file (every indexed column must be in ``rows``)."""
        for ix, writer in self._writers:
            column = rows.column(ix.column)
            chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
            for chunk in chunks:
                writer.add(chunk)

    def to_bytes(self) -> bytes:
        """The blob, columns and types in the order Java's ``HashMap``s give them."""
        by_column: dict[str, dict[str, bytes | None]] = {}
        for ix, writer in self._writers:
            by_column.setdefault(ix.column, {})[ix.type_name] = writer.to_bytes()
        return write_file_index({c: {t: by_column[c][t] for t in java_hash_order(by_column[c])} for c in java_hash_order(by_column)})


def build_file_index(spec: FileIndexOptions, fields: Mapping[str, DataType], rows: pa.Table) -> bytes:
    """The blob of a data file holding ``rows``."""
    builder = FileIndexBuilder(spec, fields)
    builder.add(rows)
    return builder.to_bytes()
