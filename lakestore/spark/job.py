"""A Spark job's typed description and its JSON codec: what the Python helpers
(``write_dataframe``, ``read_dataframe``, ``merge_into``, ``compact``) hand the ``paimon`` source
and its executors, instead of Python objects.

- :class:`TableRef`: which table, and how any process opens it again: its directory (or a
  warehouse and an identifier, for tables of a REST catalog), its branch, and the catalog options
  its file system is built from (S3 endpoint and region, ``s3.conditional-create``, the catalog
  lock's database...), **never credentials** (``lakestore.io.secrets`` says which options are).
- the scan (``ScanSpec``: columns, filter, time travel, limit) and the overwritten partition's
  typed values.

Each is one versioned JSON document, the value of one source option (``lakestore.table``,
``lakestore.scan``, ``lakestore.overwrite``; the operation, ``lakestore.operation``, is a plain
Paimon operation name). Literals and partition values keep their types (dates, timestamps,
decimals, bytes: ``lakestore.read.predicate_json``). Decoding is strict: an unknown version,
key, predicate kind or value tag raises ``OptionError`` naming the option.

Credentials reach Spark's processes the way Spark's own S3A connector gets them: from their
environment (``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` / ``AWS_SESSION_TOKEN``,
``PGPASSWORD`` for the lock database, ``LAKESTORE_REST_TOKEN`` for a REST catalog; on a cluster
``spark.executorEnv.<NAME>``), which lakestore's file systems and catalogs read when an option
is absent. :func:`table_ref` refuses (``OptionError``) a table whose catalog options hold a
credential that neither this process's environment nor the session's executor environment holds
with the same value: the executors could not read the table, and lakestore will not copy the
credential into DataFrame options, which Spark shows in its UI, plans and event logs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from lakestore import errors
from lakestore.catalog import Catalog
from lakestore.commit.snapshot_commit import CatalogSnapshotCommit, RenamingSnapshotCommit
from lakestore.io.factory import file_io_for, publisher_for
from lakestore.io.secrets import CREDENTIAL_ENV, environment_holds, is_secret, without_secrets
from lakestore.meta.branch import MAIN_BRANCH
from lakestore.read.predicate_json import predicate_from_json, predicate_to_json, value_from_json, value_to_json
from lakestore.scan import ScanSpec
from lakestore.table import Table

# The version of every document below; a reader refuses any other.
VERSION = 1

# The source options the Python helpers set.
TABLE_OPTION = "lakestore.table"
SCAN_OPTION = "lakestore.scan"
OVERWRITE_OPTION = "lakestore.overwrite"
OPERATION_OPTION = "lakestore.operation"


# -- documents ------------------------------------------------------------------------------------
def _load(text: object, option: str, *, required: Iterable[str], optional: Iterable[str] = ()) -> dict[str, Any]:
    """The JSON object of option ``option``, its version checked and its keys exactly
    ``required`` plus any of ``optional`` (besides ``version``)."""
    required, optional = set(required), set(optional)
    try:
        doc = json.loads(str(text))
    except ValueError as exc:
        raise errors.OptionError(f"option {option!r} is not a JSON document ({exc}); it is set by lakestore's Python helpers") from exc
    if not isinstance(doc, dict):
        raise errors.OptionError(f"option {option!r} must be a JSON object, got {type(doc).__name__}")
    version = doc.pop("version", None)
    if version != VERSION:
        raise errors.OptionError(f"option {option!r}: version {version!r} is not one this lakestore reads ({VERSION})")
    unknown, missing = sorted(set(doc) - required - optional), sorted(required - set(doc))
    if unknown or missing:
        raise errors.OptionError(f"option {option!r}: unknown keys {unknown}, missing keys {missing}")
    return doc


def _dump(doc: Mapping[str, Any]) -> str:
    return json.dumps({"version": VERSION, **doc}, separators=(",", ":"), allow_nan=False)


def _typed(option: str, key: str, value: Any, kind: type | tuple[type, ...], *, optional: bool = True) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise errors.OptionError(f"option {option!r}: {key!r} must be {getattr(kind, '__name__', kind)}, got {value!r}")
    return value


# -- the table ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TableRef:
    """A table, as any process opens it: ``table`` is its directory (``s3://bucket/wh/db.db/t``),
    or with ``warehouse`` its identifier in that catalog (``db.t``, ``db.t$branch_b``); ``branch``
    (None: the one ``table`` names, else main); ``name`` the identifier of a table opened by its
    directory (for messages); ``options`` the catalog options (sorted pairs)."""

    table: str
    warehouse: str | None = None
    branch: str | None = None
    name: str | None = None
    options: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.table, str) or not self.table:
            raise errors.OptionError("a table reference needs a table directory or identifier")
        object.__setattr__(self, "options", tuple(sorted((str(k), str(v)) for k, v in dict(self.options).items())))

    def __repr__(self) -> str:  # never print a credential a user gave as an option
        shown = {k: "***" if is_secret(k, v) else v for k, v in self.options}
        return f"TableRef({self.table!r}, warehouse={self.warehouse!r}, branch={self.branch!r}, options={shown!r})"

    @property
    def catalog_options(self) -> dict[str, str]:
        return dict(self.options)

    def open(self) -> Table:
        """The table, opened through its catalog (a warehouse) or at its directory.

        Raises:
            TableNotFoundError: no such table, or no such branch.
            OptionError: catalog options lakestore cannot use.
        """
        if self.warehouse is not None:
            table = Catalog(self.warehouse, options=self.catalog_options).get_table(self.table)
            return table if self.branch is None or self.branch == table.branch else table.on_branch(self.branch)
        options = self.catalog_options
        file_io = file_io_for(self.table, options)
        commit = RenamingSnapshotCommit(publisher_for(file_io, options))  # with lock.enabled: under the catalog lock
        return Table(self.table, file_io=file_io, identifier=self.name, branch=self.branch or MAIN_BRANCH, snapshot_commit=commit)

    def to_json(self) -> str:
        """This reference as the ``lakestore.table`` option's JSON document."""
        doc = {"table": self.table, "warehouse": self.warehouse, "branch": self.branch, "name": self.name, "options": dict(self.options)}
        return _dump(doc)

    @classmethod
    def from_json(cls, text: object, option: str = TABLE_OPTION) -> TableRef:
        """The reference ``to_json`` wrote.

        Raises:
            OptionError: not such a document (naming ``option``).
        """
        doc = _load(text, option, required={"table"}, optional={"warehouse", "branch", "name", "options"})
        options = _typed(option, "options", doc.get("options"), dict) or {}
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in options.items()):
            raise errors.OptionError(f"option {option!r}: 'options' must map strings to strings")
        return cls(
            table=_typed(option, "table", doc["table"], str, optional=False),
            warehouse=_typed(option, "warehouse", doc.get("warehouse"), str),
            branch=_typed(option, "branch", doc.get("branch"), str),
            name=_typed(option, "name", doc.get("name"), str),
            options=tuple(options.items()),
        )


def _described(table: Table) -> tuple[str, str | None, dict[str, str]]:
    """(directory or identifier, warehouse, catalog options with credentials) of ``table``."""
    store = table.store
    commit = store.snapshot_commit
    if isinstance(commit, CatalogSnapshotCommit) and commit.catalog is not None:
        warehouse, catalog_options = commit.catalog  # a REST catalog's table: committed through the server
        return table.identifier, warehouse, dict(catalog_options)
    # the file system's options and the catalog lock's (executors must publish under it too)
    options = store.publisher.catalog_options()
    if options is None:
        built = type(store.file_io).__name__ if store.file_io.catalog_options() is None else repr(store.publisher.lock)
        raise errors.OptionError(
            f"table {table.identifier}: lakestore.spark opens the table again in Spark's processes from its location and catalog"
            f" options, and its file system or catalog lock ({built}) was built in code, which options do not describe"
        )
    return table.path, None, options


def table_ref(table: Table, *, environments: Iterable[Mapping[str, str]] = ()) -> TableRef:
    """The reference of ``table`` (its branch included) without credentials.

    A credential in the table's catalog options must reach Spark's processes through their
    environment: it is accepted when this process's environment or one of ``environments`` (the
    session's executor environment) holds the same value in the variable standing in for it.

    Raises:
        OptionError: a credential no environment holds (or one no variable stands in for, such as
            a password inside a URI), or a file system built in code.
    """
    location, warehouse, options = _described(table)
    envs = [os.environ, *environments]
    lacking = sorted(k for k, v in options.items() if v and is_secret(k, v) and not environment_holds(k, v, envs))
    if lacking:
        none = "no variable stands in for it (a database password: PGPASSWORD)"
        hints = "; ".join(f"{k}: " + ("/".join(CREDENTIAL_ENV[k]) if CREDENTIAL_ENV.get(k) else none) for k in lacking)
        raise errors.OptionError(
            f"table {table.identifier}: its catalog options hold credentials ({', '.join(lacking)}) that Spark's processes must"
            " read from their environment: lakestore.spark never puts credentials in DataFrame options (Spark shows those in"
            f" its UI, plans and event logs). Set them in the environment ({hints}; on a cluster also spark.executorEnv.<NAME>)"
            " before the session starts, and open the table without them"
        )
    return TableRef(
        location,
        warehouse=warehouse,
        branch=table.branch,
        name=table.identifier if warehouse is None else None,
        options=tuple(without_secrets(options).items()),
    )


# -- the scan -------------------------------------------------------------------------------------
_SCAN_KEYS = {"columns", "filter", "snapshot_id", "tag", "timestamp_ms", "watermark", "limit"}


def scan_to_json(spec: ScanSpec) -> str:
    """``spec`` as the ``lakestore.scan`` option's JSON document.

    Raises:
        OptionError: an incremental range (the source reads none), or a filter literal with no
            exact JSON form.
    """
    if spec.incremental or spec.incremental_scan_mode:
        raise errors.OptionError("the paimon source reads no incremental range: read it with table.to_arrow / to_batches")
    try:
        predicate = None if spec.filter is None else predicate_to_json(spec.filter)
    except ValueError as exc:
        raise errors.OptionError(f"option {SCAN_OPTION!r}: the filter has no JSON form: {exc}") from exc
    doc = {
        "columns": None if spec.columns is None else list(spec.columns),
        "filter": predicate,
        "snapshot_id": spec.snapshot_id,
        "tag": spec.tag,
        "timestamp_ms": spec.timestamp_ms,
        "watermark": spec.watermark,
        "limit": spec.limit,
    }
    return _dump({k: v for k, v in doc.items() if v is not None})


def scan_from_json(text: object, option: str = SCAN_OPTION) -> ScanSpec:
    """The scan ``scan_to_json`` wrote.

    Raises:
        OptionError: not such a document (naming ``option``).
    """
    doc = _load(text, option, required=set(), optional=_SCAN_KEYS)
    columns = _typed(option, "columns", doc.get("columns"), list)
    if columns is not None and not all(isinstance(c, str) for c in columns):
        raise errors.OptionError(f"option {option!r}: 'columns' must be a list of column names")
    try:
        predicate = None if doc.get("filter") is None else predicate_from_json(doc["filter"])
        return ScanSpec(
            columns=None if columns is None else tuple(columns),
            filter=predicate,
            snapshot_id=_typed(option, "snapshot_id", doc.get("snapshot_id"), int),
            tag=_typed(option, "tag", doc.get("tag"), str),
            timestamp_ms=_typed(option, "timestamp_ms", doc.get("timestamp_ms"), int),
            watermark=_typed(option, "watermark", doc.get("watermark"), int),
            limit=_typed(option, "limit", doc.get("limit"), int),
        )
    except ValueError as exc:
        raise errors.OptionError(f"option {option!r}: {exc}") from exc


# -- the overwritten partition --------------------------------------------------------------------
def partition_to_json(partition: Mapping[str, Any]) -> str:
    """A partition's typed values as the ``lakestore.overwrite`` option's JSON document.

    Raises:
        OptionError: a value with no exact JSON form.
    """
    try:
        values = {str(k): value_to_json(v) for k, v in partition.items()}
    except ValueError as exc:
        raise errors.OptionError(f"option {OVERWRITE_OPTION!r}: {exc}") from exc
    return _dump({"partition": values})


def partition_from_json(text: object, option: str = OVERWRITE_OPTION) -> dict[str, Any]:
    """The partition values ``partition_to_json`` wrote, with their types.

    Raises:
        OptionError: not such a document (naming ``option``).
    """
    doc = _load(text, option, required={"partition"})
    values = _typed(option, "partition", doc["partition"], dict, optional=False)
    try:
        return {k: value_from_json(v) for k, v in values.items()}
    except ValueError as exc:
        raise errors.OptionError(f"option {option!r}: {exc}") from exc
