"""System tables of a table's rows: ``audit_log`` (each row with its ``rowkind``) and ``binlog``
(the same, each column a one-element array), as Paimon 2.0.0's batch reads of them: the
snapshot's merged rows, retractions kept (its ``forceKeepDelete``); ``ro`` (the top level of a
primary-key table) and ``row_tracking`` (rows with ``_ROW_ID`` and ``_SEQUENCE_NUMBER``)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakestore.errors import UnsupportedTableError
from lakestore.format.arrow_ops import from_numpy, from_pylist
from lakestore.format.kv import ROW_KIND_NAMES, VALUE_KIND
from lakestore.meta.schema import TableSchema
from lakestore.read.data_evolution import ROW_TRACKING_FIELDS
from lakestore.read.planner import Levels, ScanPlanner
from lakestore.system.source import LATEST, TableState, TimeTravel

ROW_KIND = "rowkind"
_KIND_NAMES = from_pylist([ROW_KIND_NAMES[i] for i in range(len(ROW_KIND_NAMES))], pa.string())


def audit_log_schema(schema: TableSchema) -> pa.Schema:
    return pa.schema([pa.field(ROW_KIND, pa.string()), *schema.arrow_schema()])


def binlog_schema(schema: TableSchema) -> pa.Schema:
    fields = [pa.field(f.name, pa.list_(pa.field("item", f.type, nullable=True))) for f in schema.arrow_schema()]
    return pa.schema([pa.field(ROW_KIND, pa.string()), *fields])


def audit_log(state: TableState, travel: TimeTravel = LATEST) -> pa.Table:
    """The snapshot's rows as a batch read merges them, with the merged row's kind (``+I``,
    ``+U``, ``-U``, ``-D``): keys whose newest version is a retraction are kept as ``-D``."""
    snapshot = state.resolve(travel)
    schema = state.store.schema_at(snapshot)
    schema.require_supported("read", table=state.store.path)
    output = audit_log_schema(schema)
    reader = state.store.split_reader(schema)
    reader.keep_retracts = True
    columns = schema.field_names
    parts = []
    for split in ScanPlanner(schema, state.store.manifest_store).plan(snapshot):
        for piece in reader.pieces(split):
            rows = reader.read_piece(piece, columns, None)
            if VALUE_KIND in rows.column_names:
                kinds = pc.take(_KIND_NAMES, rows.column(VALUE_KIND).cast(pa.int32()))
                rows = rows.drop_columns([VALUE_KIND])
            else:
                kinds = pa.chunked_array([pa.repeat(pa.scalar("+I"), rows.num_rows)], pa.string())
            parts.append(rows.add_column(0, output.field(0), kinds).cast(output))
    return pa.concat_tables(parts) if parts else output.empty_table()


def binlog(state: TableState, travel: TimeTravel = LATEST) -> pa.Table:
    """``audit_log`` with every column a one-element array (a batch read packs no pairs)."""
    rows = audit_log(state, travel)
    schema = state.store.schema_at(state.resolve(travel))
    output = binlog_schema(schema)
    columns = [rows.column(0)]
    for field in output.remove(0):
        column = rows.column(field.name).combine_chunks()
        offsets = from_numpy(np.arange(len(column) + 1, dtype=np.int32))
        columns.append(pa.ListArray.from_arrays(offsets, column, type=field.type))
    return pa.Table.from_arrays(columns, schema=output)


def read_optimized(state: TableState, travel: TimeTravel = LATEST) -> pa.Table:
    """Paimon's ``$ro``: a primary-key table's rows in its top level only (``num-levels`` - 1;
    read without merging, so rows not yet compacted there are missing); every row of an append
    table."""
    snapshot = state.resolve(travel)
    schema = state.store.schema_at(snapshot)
    schema.require_supported("read", table=state.store.path)
    top = schema.core_options().num_levels - 1
    levels = Levels(low=top, high=top) if schema.primary_keys else None
    splits = ScanPlanner(schema, state.store.manifest_store).plan(snapshot, levels=levels)
    return state.store.split_reader(schema).read_all(splits, schema.field_names, None, schema.arrow_schema())


def row_tracking_schema(schema: TableSchema) -> pa.Schema:
    return pa.schema([*schema.arrow_schema(), *ROW_TRACKING_FIELDS.values()])


def row_tracking(state: TableState, travel: TimeTravel = LATEST) -> pa.Table:
    """Paimon's ``$row_tracking``: a row-tracking table's rows with ``_ROW_ID`` and
    ``_SEQUENCE_NUMBER``. Raises ``UnsupportedTableError`` for other tables, as Paimon refuses them."""
    snapshot = state.resolve(travel)
    schema = state.store.schema_at(snapshot)
    if not schema.core_options().row_tracking or schema.primary_keys:
        raise UnsupportedTableError(
            f"table {state.store.identifier} has no row tracking (row-tracking.enabled on an append table): no $row_tracking",
            options=("row-tracking.enabled",),
        )
    schema.require_supported("read", table=state.store.path)
    output = row_tracking_schema(schema)
    splits = ScanPlanner(schema, state.store.manifest_store).plan(snapshot)
    return state.store.split_reader(schema).read_all(splits, output.names, None, output)
