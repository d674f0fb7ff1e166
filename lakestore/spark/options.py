"""The ``paimon`` source's options: their names, the table they name, and their parsing into
lakestore's typed values (a ``TableRef``, a ``ScanSpec``, an overwrite, a ``CommitId``, an
operation), each parsed once.

Users of ``spark.read/write.format("paimon")`` give string options (``warehouse``, ``branch``,
``snapshot-id``, ``columns``, ``overwrite-partition``..., and catalog options such as
``s3.endpoint``; credentials among them are the user's choice, as they are for any Spark
source). The Python helpers (``read_dataframe``, ``write_dataframe``, ``merge_into``) hold typed
values already and pass them as JSON documents (``lakestore.spark.job``): the table
(``lakestore.table``: a ``TableRef`` without credentials), the whole scan (``lakestore.scan``:
columns, filter, time travel, limit), the overwritten partition's typed values
(``lakestore.overwrite``), and the commit's operation by name (``lakestore.operation``), so
nothing goes through a string form that could not carry it (a partition value holding ``,`` or
``=``) and no Python object is pickled into an option.
"""

from __future__ import annotations

import dataclasses
import re
import uuid
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pyarrow as pa

from lakestore import errors
from lakestore.commit.commit import Overwrite
from lakestore.commit.protocol import CommitId
from lakestore.meta.partitions import check_partition_spec
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import BATCH_COMMIT_IDENTIFIER
from lakestore.read.predicate import Predicate
from lakestore.scan import ScanSpec, StoreScan
from lakestore.spark.job import (
    OPERATION_OPTION,
    OVERWRITE_OPTION,
    SCAN_OPTION,
    TABLE_OPTION,
    TableRef,
    partition_from_json,
    partition_to_json,
    scan_from_json,
    scan_to_json,
    table_ref,
)
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
# Options the Python helpers set (JSON documents, ``lakestore.spark.job``): TABLE_OPTION,
# SCAN_OPTION, OVERWRITE_OPTION; OPERATION_OPTION holds a Paimon operation name.
# The option earlier helpers pickled the table's FileIO into (credentials included): refused by name.
LEGACY_FILE_IO_OPTION = "lakestore.file-io"
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
        TABLE_OPTION,
        LEGACY_FILE_IO_OPTION,
        SCAN_OPTION,
        OVERWRITE_OPTION,
        OPERATION_OPTION,
    }
)
# The string options a ScanSpec replaces.
_SCAN_STRING_OPTIONS = (SNAPSHOT_ID, TAG, TIMESTAMP_MILLIS, COLUMNS)
# The options a TableRef replaces.
_TABLE_STRING_OPTIONS = (PATH, WAREHOUSE, BRANCH)


# -- the table ------------------------------------------------------------------------------------
def table_ref_of(options: Mapping[str, str]) -> TableRef:
    """The table the options name: the helpers' ``lakestore.table``, or the ``path`` option:
    ``db.t`` (or ``db.t$branch_<b>``) in the ``warehouse`` option's catalog, or a table directory
    (``s3://bucket/wh/db.db/t``) when no warehouse is given; on the ``branch`` option's branch
    when it names one; every option that is not the source's own is a catalog option.

    Raises:
        OptionError: no table named, ``lakestore.table`` together with options it replaces, or
            the pickled FileIO option of earlier helpers.
    """
    if options.get(LEGACY_FILE_IO_OPTION):
        raise errors.OptionError(
            f"option {LEGACY_FILE_IO_OPTION!r} is not read any more (it carried a pickled file system, credentials included):"
            f" lakestore.spark's helpers pass the table as {TABLE_OPTION!r}; a Spark user names it with load()/save() and 'warehouse'"
        )
    catalog_options = {str(k): str(v) for k, v in options.items() if k not in SOURCE_OPTIONS}
    text = options.get(TABLE_OPTION)
    if text:
        given = [k for k in _TABLE_STRING_OPTIONS if options.get(k)] + sorted(catalog_options)
        if given:
            raise errors.OptionError(f"options {given} cannot be combined with {TABLE_OPTION} (the table reference holds them)")
        return TableRef.from_json(text)
    warehouse, identifier = options.get(WAREHOUSE), options.get(PATH)
    if not identifier:
        raise errors.OptionError("the paimon source needs a table name in load()/save() (and .option('warehouse', ...))")
    branch = str(options.get(BRANCH) or "") or None
    return TableRef(str(identifier), warehouse=str(warehouse) if warehouse else None, branch=branch, options=tuple(catalog_options.items()))


def open_table(options: Mapping[str, str]) -> Table:
    """The table the options name (``table_ref_of``), opened.

    Raises:
        OptionError: no table named, or options lakestore cannot use.
        TableNotFoundError: no such table, or no such branch.
    """
    return table_ref_of(options).open()


def table_options(table: Table, *, environments: Iterable[Mapping[str, str]] = ()) -> dict[str, str]:
    """The source option naming ``table`` itself: its reference, branch included, without
    credentials (``lakestore.spark.job.table_ref``; ``environments``: the session's executor
    environment, where a credential may be found too).

    Raises:
        OptionError: the table's catalog options hold a credential no environment holds.
    """
    return {TABLE_OPTION: table_ref(table, environments=environments).to_json()}


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
    """The source option carrying ``spec`` (columns, filter, time travel, limit) whole.

    Raises:
        OptionError: an incremental range, or a filter literal with no exact JSON form.
    """
    return {SCAN_OPTION: scan_to_json(spec)}


def scan_of(options: Mapping[str, str]) -> ScanSpec:
    """The scan the options ask for: the ``ScanSpec`` of the Python helpers, or one built
    from the string options ``columns`` (comma-separated), ``snapshot-id``, ``tag``,
    ``timestamp-millis``.

    Raises:
        OptionError: unreadable options, more than one time-travel option, or the helpers' scan
            together with string scan options.
    """
    text = options.get(SCAN_OPTION)
    if text:
        given = [k for k in _SCAN_STRING_OPTIONS if options.get(k)]
        if given:
            raise errors.OptionError(f"options {given} cannot be combined with {SCAN_OPTION} (the scan holds them)")
        return scan_from_json(text)
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
    operation = str(options.get(OPERATION_OPTION) or "") or None
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
    return {OVERWRITE_OPTION: partition_to_json(check_partition_spec(table.partition_keys, overwrite, what="overwrite"))}


def overwrite_of(table: Table, options: Mapping[str, str], overwrite: bool) -> Overwrite:
    """What a write replaces: None (Spark's mode append), the whole table (``True``), or one
    partition: the helpers' typed dict (checked when encoded), or the
    ``overwrite-partition`` string option parsed once.

    Raises:
        OptionError: a partition without mode overwrite, both forms given, or an unreadable
            ``lakestore.overwrite``.
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
        return partition_from_json(encoded)
    return parse_partition_spec(table, str(text)) if text else True


# -- names of earlier releases -------------------------------------------------------------------
_REMOVED = {
    "encode_value": "option values are JSON documents now (lakestore.spark.job: TableRef.to_json, scan_to_json, partition_to_json)",
    "decode_value": "option values are JSON documents now (lakestore.spark.job: TableRef.from_json, scan_from_json, partition_from_json)",
}


def __getattr__(name: str) -> Any:
    if name == "FILE_IO_OPTION":
        warnings.warn(
            f"lakestore.spark.options.FILE_IO_OPTION is deprecated: the option is refused; the helpers pass {TABLE_OPTION!r}",
            DeprecationWarning,
            stacklevel=2,
        )
        return LEGACY_FILE_IO_OPTION
    if name in _REMOVED:
        raise AttributeError(f"lakestore.spark.options.{name} was removed (it pickled Python objects into options): {_REMOVED[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
