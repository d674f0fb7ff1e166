"""An output's schema against its table's: the Paimon schema evolution an additive change needs
(``lakestore.AddColumn`` for a new column, ``UpdateColumnType`` for a widened type, through
``Catalog.alter_table``), and a refusal, before anything is written, for any other change.

Additive means Paimon's own rules (``lakestore.meta.schema_change``): a new column (nullable),
or a type every value of the old one fits in (INT to BIGINT, FLOAT to DOUBLE, ...). A column
the table has and the output lacks, or a type the table's cannot hold, is refused: the anchors
differ here (dagster-deltalake refuses any change unless told to merge or overwrite the schema,
dagster-iceberg merges by name by default), and lakestore follows dagster-iceberg's merge for
additions while refusing drops and narrowing, which a merge by name would not keep lossless.
A type the table's holds (an output's INT into a BIGINT column, a string as large_string)
is cast on write without a schema change. Nullability is not compared: pandas and Polars
outputs mark every column nullable; a null in a NOT NULL column is refused by the write.
"""

from __future__ import annotations

import pyarrow as pa

from lakestore import AddColumn, SchemaChange, UpdateColumnType
from lakestore.errors import UnsupportedTypeError
from lakestore.format.types import DataType, from_arrow
from lakestore.meta.schema_change import is_widening
from resources.paimon.errors import IncompatibleSchemaError


def _paimon_type(arrow_type: pa.DataType, column: str, table: str) -> DataType:
    try:
        return from_arrow(arrow_type).copy(nullable=True)
    except UnsupportedTypeError as exc:
        raise IncompatibleSchemaError(f"table {table}: column {column!r} of type {arrow_type} has no Paimon type: {exc}") from exc


def evolution(table_schema: pa.Schema, output_schema: pa.Schema, table: str, *, partial: bool = False) -> list[SchemaChange]:
    """The schema changes that let ``output_schema`` be written into a table of ``table_schema``
    (empty: none needed). ``partial``: the output may lack columns (an upsert into a
    ``partial-update`` table, whose missing columns keep their values).

    Raises:
        IncompatibleSchemaError: the output lacks columns of the table, or changes a type in a
            way Paimon cannot evolve.
    """
    missing = [name for name in table_schema.names if name not in output_schema.names]
    problems: list[str] = []
    if missing and not partial:
        problems.append(f"the output lacks columns {missing} (dropping columns is not an additive change)")
    changes: list[SchemaChange] = []
    for field in output_schema:
        if field.name not in table_schema.names:
            changes.append(AddColumn(field.name, _paimon_type(field.type, field.name, table)))
            continue
        current = table_schema.field(field.name)
        old = _paimon_type(current.type, field.name, table)
        new = _paimon_type(field.type, field.name, table)
        if old == new or is_widening(new, old):
            continue  # the write casts it
        if is_widening(old, new):
            changes.append(UpdateColumnType(field.name, new.copy(nullable=current.nullable)))
        else:
            problems.append(f"column {field.name!r} changes from {old} to {new}, which Paimon cannot widen to")
    if problems:
        raise IncompatibleSchemaError(
            f"table {table}: the output's schema is not an additive change of the table's, nothing was written: " + "; ".join(problems)
        )
    return changes
