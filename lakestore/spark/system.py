"""Paimon's system tables through the ``paimon`` data source:
``spark.read.format("paimon").option("warehouse", wh).load("db.t$files")`` (also
``db.t$branch_dev$files``; ``.option("snapshot-id", N)`` / ``"tag"`` / ``"timestamp-millis"`` time-travel the
tables that read a snapshot). Read-only: writes are refused by name."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from lakestore import errors
from lakestore.catalog import Catalog
from lakestore.spark.options import SOURCE_OPTIONS
from lakestore.system import SystemTable, split_system_table


def open_system_table(options: Mapping[str, str]) -> SystemTable | None:
    """The system table the ``path`` option names in the ``warehouse`` option's catalog (None: it
    names a data table)."""
    identifier, warehouse = options.get("path"), options.get("warehouse")
    if not identifier or not warehouse or split_system_table(str(identifier))[1] is None:
        return None
    catalog_options = {k: str(v) for k, v in options.items() if k not in SOURCE_OPTIONS}
    return Catalog(str(warehouse), options=catalog_options).get_system_table(str(identifier))


def _spark_type(t: pa.DataType) -> pa.DataType:
    """Arrow as Spark takes it: timestamps in microseconds (system tables' are milliseconds)."""
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz=t.tz)
    if pa.types.is_list(t):
        return pa.list_(pa.field(t.value_field.name, _spark_type(t.value_type), nullable=t.value_field.nullable))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _spark_type(f.type), nullable=f.nullable) for f in t])
    return t


def _spark_arrow(schema: pa.Schema) -> pa.Schema:
    return pa.schema([pa.field(f.name, _spark_type(f.type), nullable=f.nullable) for f in schema])


def system_schema(table: SystemTable) -> StructType:
    return from_arrow_schema(_spark_arrow(table.schema), prefer_timestamp_ntz=True)


def refuse_write(table: SystemTable) -> errors.UnsupportedTableError:
    return errors.UnsupportedTableError(f"cannot write system table {table.identifier}: system tables are read-only")


class SystemTableReader(DataSourceReader):
    """One partition holding the whole system table (metadata-sized)."""

    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        self.options = dict(options)
        self.names = [f.name for f in schema.fields]

    def partitions(self) -> Sequence[InputPartition]:
        return [InputPartition(0)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        table = open_system_table(self.options)
        assert table is not None
        snapshot, tag, timestamp = self.options.get("snapshot-id"), self.options.get("tag"), self.options.get("timestamp-millis")
        if table.time_travel:
            data = table.to_arrow(
                columns=self.names,
                snapshot_id=int(snapshot) if snapshot is not None else None,
                tag=tag,
                timestamp_ms=int(timestamp) if timestamp is not None else None,
            )
        else:
            data = table.to_arrow(columns=self.names)
        yield from data.cast(_spark_arrow(data.schema)).to_batches()
