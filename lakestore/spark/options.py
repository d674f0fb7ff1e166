"""The ``paimon`` source's options: their names, the table they open, and their parsing into
lakestore's typed values (a ``ScanSpec``, an overwrite, a ``CommitId``), each parsed once.

Users of ``spark.read/write.format("paimon")`` give string options (``snapshot-id``,
``columns``, ``overwrite-partition``...). The Python helpers (``read_dataframe``,
``write_dataframe``, ``merge_into``) hold typed values already and pass them encoded
(``encode_value``): the table's FileIO, the whole scan (``ScanSpec``: columns, filter, time
travel, limit), the overwritten partition's typed values and the commit's operation, so nothing
goes through a string form that could not carry it (a partition value holding ``,`` or ``=``).
"""

from __future__ import annotations

import base64
import dataclasses
import pickle
import re
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pyarrow as pa

import lakestore
from lakestore import errors
from lakestore.commit.commit import Overwrite
from lakestore.commit.protocol import CommitId
from lakestore.io.fileio import FileIO
from lakestore.meta.branch import MAIN_BRANCH
from lakestore.meta.partitions import check_partition_spec
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import BATCH_COMMIT_IDENTIFIER
from lakestore.read.predicate import Predicate
from lakestore.scan import ScanSpec, StoreScan
from lakestore.table import Table

SOURCE_NAME = "paimon"
# The column ``distribute`` adds: each row's writer slot (dropped before the write).
BUCKET_COLUMN = "__lakestore_bucket"
# The column ``merge_into`` adds: each row's kind (``lakestore.format.kv``'s codes: -D rows of a
# delete, +U of an update), which the write task writes the row with and drops.
ROW_KIND_COLUMN = "__lakestore_row_kind"

# Options users give.
PATH = "path"
WAREHOUSE = "warehouse"
# Paimon's ``branch`` option: the branch of the table the source reads and writes (default main)
BRANCH = "branch"
SNAPSHOT_ID = "snapshot-id"
TAG = "tag"
TIMESTAMP_MILLIS = "timestamp-millis"
COLUMNS = "columns"
MAX_PARTITIONS = "max-partitions"
OVERWRITE_PARTITION = "overwrite-partition"
COMMIT_USER = "commit-user"
COMMIT_IDENTIFIER = "commit-identifier"
START = "start"
CONSUMER_ID = "consumer-id"
MAX_SNAPSHOTS_PER_TRIGGER = "max-snapshots-per-trigger"
READ_CHANGELOG = "read.changelog"
# Options the Python helpers set, values encoded with ``encode_value``.
FILE_IO_OPTION = "lakestore.file-io"
SCAN_OPTION = "lakestore.scan"
OVERWRITE_OPTION = "lakestore.overwrite"
OPERATION_OPTION = "lakestore.operation"
# Paimon 2.0's ``Snapshot.Operation`` names: what a snapshot's ``operation`` may hold.
OPERATIONS = frozenset(
    {
        "WRITE",
        "OVERWRITE",
        "DELETE",
        "TRUNCATE",
        "UPDATE",
        "MERGE",
        "CREATE_TABLE_AS_SELECT",
        "REPLACE_TABLE_AS_SELECT",
        "CREATE_OR_REPLACE_TABLE_AS_SELECT",
    }
)

# Options that configure the source itself; every other option goes to the catalog.
SOURCE_OPTIONS = frozenset(
    {
        PATH,
        WAREHOUSE,
        BRANCH,
        SNAPSHOT_ID,
        TAG,
        TIMESTAMP_MILLIS,
        COLUMNS,
        MAX_PARTITIONS,
        OVERWRITE_PARTITION,
        COMMIT_USER,
        COMMIT_IDENTIFIER,
        START,
        CONSUMER_ID,
        MAX_SNAPSHOTS_PER_TRIGGER,
        READ_CHANGELOG,
        FILE_IO_OPTION,
        SCAN_OPTION,
        OVERWRITE_OPTION,
        OPERATION_OPTION,
    }
)
# The string options a ScanSpec replaces.
_SCAN_STRING_OPTIONS = (SNAPSHOT_ID, TAG, TIMESTAMP_MILLIS, COLUMNS)


# -- encoded values -------------------------------------------------------------------------------
def encode_value(value: object) -> str:
    """A Python value as an option value (the Python helpers pass typed values this way)."""
    return base64.b64encode(pickle.dumps(value)).decode()


def decode_value(options: Mapping[str, str], key: str, kind: type) -> Any:
    """The value ``encode_value`` stored under ``key``, an instance of ``kind`` (None: not set).

    Raises:
        OptionError: the option holds no encoded ``kind``.
    """
    text = options.get(key)
    if not text:
        return None
    try:
        value = pickle.loads(base64.b64decode(str(text)))  # noqa: S301 - set by lakestore's helpers, like every option of the session
    except Exception as exc:
        raise errors.OptionError(f"option {key!r} is set by lakestore's Python helpers only") from exc
    if not isinstance(value, kind):
        raise errors.OptionError(f"option {key!r} holds a {type(value).__name__}, not a {kind.__name__}")
    return value


# -- the table ------------------------------------------------------------------------------------
def open_table(options: Mapping[str, str]) -> Table:
    """The table named by the ``path`` option: ``db.t`` (or ``db.t$branch_<b>``) in the
    ``warehouse`` option's catalog, or a table directory (``s3://bucket/wh/db.db/t``) when no
    warehouse is given; on the ``branch`` option's branch when it names one.

    Raises:
        OptionError: no table named.
        TableNotFoundError: no such table, or no such branch.
    """
    warehouse, identifier = options.get(WAREHOUSE), options.get(PATH)
    if not identifier:
        raise errors.OptionError("the paimon source needs a table name in load()/save() (and .option('warehouse', ...))")
    branch = str(options.get(BRANCH) or "") or None
    catalog_options = {k: str(v) for k, v in options.items() if k not in SOURCE_OPTIONS}
    file_io: FileIO | None = decode_value(options, FILE_IO_OPTION, FileIO)
    if file_io is not None:  # set by the Python helpers, which hold a Table (and its FileIO) already
        return Table.from_path(str(identifier), file_io=file_io, branch=branch or MAIN_BRANCH)
    if not warehouse:
        return Table.from_path(str(identifier), options=catalog_options, branch=branch or MAIN_BRANCH)
    table = lakestore.Catalog(str(warehouse), options=catalog_options).get_table(str(identifier))
    return table if branch is None or branch == table.branch else table.on_branch(branch)


def table_options(table: Table) -> dict[str, str]:
    """Source options naming ``table`` itself: its directory, its branch and its FileIO
    (credentials included)."""
    return {PATH: table.path, BRANCH: table.branch, FILE_IO_OPTION: encode_value(table.file_io)}


def int_option(options: Mapping[str, str], key: str) -> int | None:
    """An integer option (None: not set).

    Raises:
        OptionError: it is not an integer.
    """
    value = options.get(key)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError as exc:
        raise errors.OptionError(f"option {key!r} must be an integer, got {value!r}") from exc


# -- the scan -------------------------------------------------------------------------------------
def scan_option(spec: ScanSpec) -> dict[str, str]:
    """The source option carrying ``spec`` (columns, filter, time travel, limit) whole."""
    return {SCAN_OPTION: encode_value(spec)}


def scan_of(options: Mapping[str, str]) -> ScanSpec:
    """The scan the options ask for: the encoded ``ScanSpec`` of the Python helpers, or one built
    from the string options ``columns`` (comma-separated), ``snapshot-id``, ``tag``,
    ``timestamp-millis``.

    Raises:
        OptionError: unreadable options, more than one time-travel option, an encoded scan
            together with string scan options, or an incremental range (not read by the source).
    """
    spec: ScanSpec | None = decode_value(options, SCAN_OPTION, ScanSpec)
    if spec is not None:
        given = [k for k in _SCAN_STRING_OPTIONS if options.get(k)]
        if given:
            raise errors.OptionError(f"options {given} cannot be combined with {SCAN_OPTION} (the scan holds them)")
        if spec.incremental_between is not None or spec.incremental_between_timestamp is not None or spec.incremental_scan_mode:
            raise errors.OptionError("the paimon source reads no incremental range: read it with table.to_arrow / to_batches")
        return spec
    columns = options.get(COLUMNS)
    try:
        return ScanSpec(
            columns=tuple(c.strip() for c in str(columns).split(",") if c.strip()) if columns else None,
            snapshot_id=int_option(options, SNAPSHOT_ID),
            tag=options.get(TAG) or None,
            timestamp_ms=int_option(options, TIMESTAMP_MILLIS),
        )
    except ValueError as exc:
        raise errors.OptionError(str(exc)) from exc


def scan_schema(table: Table, spec: ScanSpec) -> TableSchema:
    """The schema ``spec`` reads ``table`` with: the one of the snapshot the read sees (time
    travel, or the table's own ``scan.*`` options, as ``Table.scan`` reads), its columns and
    filter checked against it.

    Raises:
        SchemaMismatchError: the scan names a column the schema does not have.
        SnapshotNotFoundError: the time-travel target does not exist.
        TagNotFoundError: the tag does not exist.
        OptionError: the table's own options ask for an incremental read.
    """
    try:
        _, schema = StoreScan(table.store).read_target(spec.travel)
    except ValueError as exc:
        raise errors.OptionError(str(exc)) from exc
    names = schema.field_names
    unknown = [c for c in spec.columns or () if c not in names]
    unknown += sorted(c for c in (spec.filter.columns() if spec.filter is not None else ()) if c not in names)
    if unknown:
        raise errors.SchemaMismatchError(f"unknown columns {unknown} (columns: {names})")
    return schema


def with_filter(spec: ScanSpec, predicate: Predicate) -> ScanSpec:
    """``spec`` with ``predicate`` added (AND) to its filter."""
    combined = predicate if spec.filter is None else spec.filter & predicate
    return dataclasses.replace(spec, filter=combined)


# -- writes ---------------------------------------------------------------------------------------
def commit_id_of(options: Mapping[str, str]) -> CommitId:
    """The ``CommitId`` of ``commit-user`` (default: a fresh UUID) and ``commit-identifier``
    (default: the batch identifier).

    Raises:
        OptionError: the identifier is not an integer.
    """
    identifier = int_option(options, COMMIT_IDENTIFIER)
    user = str(options.get(COMMIT_USER) or uuid.uuid4())
    return CommitId(user, BATCH_COMMIT_IDENTIFIER if identifier is None else identifier)


def operation_of(options: Mapping[str, str]) -> str | None:
    """The operation the write's snapshot records (``merge_into``'s ``MERGE``; None: none).

    Raises:
        OptionError: not one of Paimon's ``Snapshot.Operation`` names.
    """
    operation: str | None = decode_value(options, OPERATION_OPTION, str)
    if operation is not None and operation not in OPERATIONS:
        raise errors.OptionError(f"option {OPERATION_OPTION!r}: {operation!r} is not one of Paimon's operations {sorted(OPERATIONS)}")
    return operation


def parse_partition_spec(table: Table, spec: str) -> dict[str, Any]:
    """``"dt=2024-01-01,h=3"`` -> ``{"dt": "2024-01-01", "h": 3}`` (values cast to the keys' types).

    Raises:
        OptionError: not ``key=value`` pairs.
        PartitionValueError: a key that is not a partition key.
    """
    out: dict[str, Any] = {}
    fields = {f.name: f for f in table.arrow_schema}
    for item in spec.split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep:
            raise errors.OptionError(f"overwrite-partition {spec!r}: expected key=value pairs of partition keys {table.partition_keys}")
        out[key] = pa.array([value.strip()]).cast(fields[key].type)[0].as_py() if key in fields else value
    return check_partition_spec(table.partition_keys, out, what="overwrite")


def overwrite_option(table: Table, overwrite: object) -> dict[str, str]:
    """The source option carrying the partition ``overwrite`` replaces (a dict of partition
    values), its values typed.

    Raises:
        PartitionValueError: not a dict, or a key that is not a partition key.
    """
    return {OVERWRITE_OPTION: encode_value(check_partition_spec(table.partition_keys, overwrite, what="overwrite"))}


def overwrite_of(table: Table, options: Mapping[str, str], overwrite: bool) -> Overwrite:
    """What a write replaces: None (Spark's mode append), the whole table (``True``), or one
    partition: the helpers' encoded typed dict (checked when encoded), or the
    ``overwrite-partition`` string option parsed once.

    Raises:
        OptionError: a partition without mode overwrite, or both forms given.
        PartitionValueError: a key that is not a partition key.
    """
    text, encoded = options.get(OVERWRITE_PARTITION), options.get(OVERWRITE_OPTION)
    if text and encoded:
        raise errors.OptionError(f"give {OVERWRITE_PARTITION} or {OVERWRITE_OPTION}, not both")
    if not overwrite:
        if text or encoded:
            raise errors.OptionError("overwrite-partition needs mode('overwrite')")
        return None
    if encoded:
        partition: dict[str, Any] = decode_value(options, OVERWRITE_OPTION, dict)
        return partition
    return parse_partition_spec(table, str(text)) if text else True


# -- errors ---------------------------------------------------------------------------------------
_EXECUTOR_ERROR = re.compile(r"lakestore\.errors\.(\w+): ([^\n]*)")


@contextmanager
def typed_errors() -> Iterator[None]:
    """A lakestore error raised on an executor reaches the driver wrapped in Spark's exception:
    re-raise it as the same typed error (the Spark exception stays its cause)."""
    try:
        yield
    except errors.LakestoreError:
        raise
    except Exception as exc:
        match = _EXECUTOR_ERROR.search(str(exc))
        error_type = getattr(errors, match.group(1), None) if match else None
        if match is not None and isinstance(error_type, type) and issubclass(error_type, errors.LakestoreError):
            if error_type is errors.CorruptMetadataError:
                raise errors.CorruptMetadataError("<executor>", match.group(2)) from exc
            raise error_type(match.group(2)) from exc
        raise
