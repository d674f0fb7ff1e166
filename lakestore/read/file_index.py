"""Skipping data files by their Paimon file indexes (Paimon's ``FileIndexPredicate``).

A file's index blob is embedded in its manifest entry or written to ``<data file>.index`` (named
in its extra files). A filter is answered leaf by leaf by every index of the leaf's column
(their answers ANDed); ``And``/``Or`` combine the answers; a ``Not`` (or any leaf the index does
not know) keeps the file. Only a "no row can match" answer skips the file: row positions that a
bitmap index may return do not narrow reads here.

Used only where Paimon uses it: append tables (not data-evolution ones), and primary-key tables
with deletion vectors (``KeyValueFileStore``: ``file-index.read.enabled`` and
``deletion-vectors.enabled``), whose files at levels >= 1 each hold a key's only live version.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from lakestore.errors import UnsupportedTableError
from lakestore.format.fileindex.base import REMAIN, SKIP, FileIndexReader, FileIndexResult
from lakestore.format.fileindex.format import EMPTY_INDEX_FLAG, EMPTY_READER, INDEX_FILE_SUFFIX, read_file_index_head
from lakestore.format.fileindex.registry import COLUMNS_SUFFIX, PREFIX, index_type, read_enabled
from lakestore.format.types import DataType
from lakestore.io.fileio import FileIO
from lakestore.meta.manifest import ManifestEntry
from lakestore.meta.paths import TablePaths
from lakestore.meta.schema import TableSchema
from lakestore.read.predicate import And, Compare, IsIn, IsNull, Not, Or, Predicate

_COMPARE = {"<", "<=", ">", ">="}


class BlobReaders:
    """The index readers of one blob, per column, made on first use."""

    def __init__(self, blob: bytes, fields: Mapping[str, DataType], *, source: str) -> None:
        self.blob = blob
        self.fields = fields
        self.source = source
        self.head = read_file_index_head(blob, source=source)
        self._readers: dict[str, list[FileIndexReader]] = {}

    def readers(self, column: str) -> list[FileIndexReader]:
        """The readers of ``column``'s indexes whose type lakestore knows (others are skipped).
        Raises ``CorruptMetadataError`` for an index its type cannot read."""
        found = self._readers.get(column)
        if found is not None:
            return found
        out: list[FileIndexReader] = []
        data_type = self.fields.get(column)
        for type_name, slot in self.head.get(column, {}).items():
            if data_type is None:
                break
            if slot.start == EMPTY_INDEX_FLAG:
                out.append(EMPTY_READER)
                continue
            implementation = index_type(type_name)
            if implementation is None or not implementation.supports(data_type):
                continue  # an index type lakestore does not read: the file is read
            out.append(implementation.reader(data_type, {}, self.blob[slot.start : slot.start + slot.length]))
        self._readers[column] = out
        return out


def _leaf(predicate: Predicate, reader: FileIndexReader) -> FileIndexResult:
    if isinstance(predicate, Compare):
        if predicate.op == "==":
            return reader.equal(predicate.value)
        if predicate.op == "!=":
            return reader.not_equal(predicate.value)
        if predicate.op in _COMPARE:
            return reader.compare(predicate.op, predicate.value)
        return REMAIN
    if isinstance(predicate, IsIn):
        return reader.is_in(list(predicate.values))
    if isinstance(predicate, IsNull):
        return reader.is_not_null() if predicate.negated else reader.is_null()
    return REMAIN


def evaluate(predicate: Predicate, readers: Callable[[str], list[FileIndexReader]]) -> FileIndexResult:
    """What the indexes say about ``predicate`` over one file (``readers``: a column's index
    readers). Conservative: REMAIN wherever an index cannot decide."""
    if isinstance(predicate, And):
        left = evaluate(predicate.left, readers)
        if not left.remain:
            return SKIP
        return left.and_(evaluate(predicate.right, readers))
    if isinstance(predicate, Or):
        return evaluate(predicate.left, readers).or_(evaluate(predicate.right, readers))
    if isinstance(predicate, Not):
        return REMAIN  # an index's answer cannot be negated (a bloom filter's REMAIN is "maybe")
    if isinstance(predicate, (Compare, IsIn, IsNull)):
        column = next(iter(predicate.columns()))
        result = REMAIN
        for reader in readers(column):
            result = result.and_(_leaf(predicate, reader))
            if not result.remain:
                return SKIP
        return result
    return REMAIN


def indexed_columns(options: Mapping[str, str]) -> set[str]:
    """The columns a table's ``file-index.<type>.columns`` options index."""
    out: set[str] = set()
    for key, value in options.items():
        if key.startswith(PREFIX) and key.endswith(COLUMNS_SUFFIX):
            out.update(n.strip() for n in str(value).split(",") if n.strip())
    return out


class FileIndexFilter:
    """Decides, per manifest entry, whether its file's indexes rule ``predicate`` out."""

    def __init__(self, schema: TableSchema, file_io: FileIO, table_path: str, predicate: Predicate) -> None:
        self.schema = schema
        self.file_io = file_io
        self.predicate = predicate
        self.fields = {f.name: f.type for f in schema.fields}
        self._paths: TablePaths | None = None
        self._table_path = table_path
        # index files are read only when the filter touches a column the table indexes
        self._read_files = bool(predicate.columns() & indexed_columns(schema.options))

    @staticmethod
    def applies(schema: TableSchema) -> bool:
        """Whether reads of this table consult file indexes (as Paimon: ``file-index.read.enabled``;
        append tables, or primary-key tables with deletion vectors)."""
        options = schema.core_options()
        if not read_enabled(schema.options):
            return False
        if schema.primary_keys:
            return options.deletion_vectors
        return not (options.row_tracking and options.data_evolution)

    def _blob(self, entry: ManifestEntry) -> bytes | None:
        f = entry.file
        if f.embedded_file_index is not None:
            return f.embedded_file_index
        names = [x for x in f.extra_files if x.endswith(INDEX_FILE_SUFFIX)]
        if len(names) != 1 or not self._read_files:
            return None  # none, or several (Paimon refuses to choose): the file is read
        if self._paths is None:
            self._paths = TablePaths.of(self._table_path, self.schema)
        main = self._paths.entry_path(entry)
        return self.file_io.read_bytes(main.rsplit("/", 1)[0] + "/" + names[0])

    def skips(self, entry: ManifestEntry) -> bool:
        """True when no row of the entry's file can match. Raises ``CorruptMetadataError`` for a
        corrupt index."""
        if entry.file.schema_id != self.schema.id:
            return False  # an index of another schema version: its columns may differ
        blob = self._blob(entry)
        if blob is None:
            return False
        try:
            readers = BlobReaders(blob, self.fields, source=entry.file.file_name)
        except UnsupportedTableError:
            return False  # a newer index version: the file is read
        return not evaluate(self.predicate, readers.readers).remain
