"""``PaimonIOManager``: Dagster assets stored as Paimon tables in a lakestore warehouse.

An asset returns a ``pyarrow.Table``, a ``pyarrow.RecordBatchReader``, a pandas or Polars
DataFrame (or Polars LazyFrame) or a PySpark DataFrame; the I/O manager writes it to the table its
asset key names (``["db", "table"]``; a one-part key names a table in ``default_database``),
creating the table on the first write from the output's schema and the asset's definition
metadata:

- ``primary_keys``: the primary-key columns (none: an append table);
- ``partition_expr``: the column a partitioned asset's partition key maps to (``{dimension:
  column}`` for a multi-partitioned asset; ``resources.paimon.partitions`` says how keys become
  values); ``partition_keys``: the table's partition columns (default: the ``partition_expr``
  columns);
- ``table_options``: Paimon table options (``{"bucket": "4"}``), applied when the table is created;
- ``write_mode``: ``"overwrite"`` (the default: an OVERWRITE snapshot of exactly the materialized
  partitions, or of the whole table for an unpartitioned asset), ``"append"``, or ``"upsert"``
  (primary-key tables: rows replace rows of the same key);
- ``database``: a database other than the key's (or the default one).

Downstream assets load the whole table, or the upstream partitions their partition depends on,
and only the ``columns`` their input metadata names (``dg.AssetIn(metadata={"columns": [...]})``),
both pushed into lakestore's scan. The behaviour follows dagster-deltalake and dagster-iceberg
where they agree; where they differ the modules of ``resources.paimon`` say which one lakestore
follows (schema evolution, string columns for time windows).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import dagster as dg
import pyarrow as pa
from pydantic import Field

import lakestore
from lakestore.errors import SchemaChangeError
from resources.lakestore_catalog import LakestoreCatalogSettings
from resources.paimon import partitions as parts
from resources.paimon.errors import IncompatibleSchemaError, TableDefinitionError
from resources.paimon.frames import is_spark, read_as, spark_arrow_schema, to_arrow
from resources.paimon.metadata import PREVIEW_ROWS, committed_snapshots, output_metadata
from resources.paimon.schema import evolution
from resources.paimon.write import WRITE_MODES, write_arrow, write_spark

_EVOLVE_ATTEMPTS = 3


class PaimonIOManager(LakestoreCatalogSettings, dg.ConfigurableIOManager):
    """Stores assets as Paimon tables in the warehouse the catalog settings (shared with
    ``LakestoreResource``) name, and loads them for downstream assets.

    Example::

        defs = dg.Definitions(
            assets=[orders, daily_revenue],
            resources={"io_manager": PaimonIOManager(warehouse=dg.EnvVar("LAKESTORE_WAREHOUSE"))},
        )
    """

    default_database: str = Field(default="default", description="Database of assets whose key has one part")
    write_mode: str = Field(
        default="overwrite", description="Default write mode: overwrite (the materialized partitions), append or upsert"
    )

    # -- names ---------------------------------------------------------------------------------
    def table_identifier(self, asset_key: dg.AssetKey, metadata: Mapping[str, Any]) -> str:
        """``"db.table"`` of an asset: the key's last two parts, or its one part in
        ``default_database``; a ``database`` metadata entry overrides the database."""
        path = asset_key.path
        database = path[-2] if len(path) >= 2 else self.default_database
        return f"{metadata.get('database') or database}.{path[-1]}"

    # -- outputs -------------------------------------------------------------------------------
    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        """Write an asset's output to its table (created or evolved first) and report the commit.

        Raises:
            TableDefinitionError: not an asset, an unknown ``write_mode``, metadata that
                contradicts the existing table, or an upsert into a table without primary key.
            UnsupportedOutputTypeError: an output none of the supported DataFrame kinds.
            IncompatibleSchemaError: a schema change that is not additive (nothing is written).
            PartitionMappingError: partitions that do not map onto the table's partition columns.
            SchemaMismatchError, PartitionValueError, CommitConflictError: from lakestore's write.
        """
        if obj is None:
            context.log.info("PaimonIOManager: the output is None, nothing written")
            return
        if not context.has_asset_key:
            raise TableDefinitionError("PaimonIOManager stores asset outputs only (this output has no asset key)")
        metadata = dict(context.definition_metadata or {})
        mode = str(metadata.get("write_mode") or self.write_mode)
        if mode not in WRITE_MODES:
            raise TableDefinitionError(f"write_mode {mode!r} is none of {list(WRITE_MODES)}")
        identifier = self.table_identifier(context.asset_key, metadata)
        spark = is_spark(obj)
        data = None if spark else to_arrow(obj)
        schema = spark_arrow_schema(obj) if data is None else data.schema
        partitions_def = context.asset_partitions_def if context.has_asset_partitions else None
        dims = parts.dimensions(partitions_def, metadata, context.asset_key.to_user_string())
        table = self._table_for(identifier, schema, metadata, dims, mode)
        specs, head_filter = None, None
        if dims:
            assert partitions_def is not None
            keys = list(context.asset_partition_keys)
            specs = parts.partition_specs(dims, keys, partitions_def, table.arrow_schema, identifier)
            head_filter = parts.partition_filter(dims, keys, partitions_def, table.arrow_schema, identifier)
        user = f"dagster-{uuid.uuid4()}"
        before = table.store.snapshot_manager.latest_id()
        if spark:
            write_spark(table, obj, mode, specs, user)
        else:
            assert data is not None
            write_arrow(table, data, mode, specs, user)
        snapshots = committed_snapshots(table, user, before)
        head = table.to_arrow(filter=head_filter, limit=PREVIEW_ROWS)
        context.add_output_metadata(output_metadata(table, snapshots, head=head))

    def _table_for(
        self, identifier: str, schema: pa.Schema, metadata: Mapping[str, Any], dims: list[parts.Dimension], mode: str
    ) -> lakestore.Table:
        """The output's table: created from ``schema`` and the metadata when missing, evolved
        (additive changes) when the output adds columns or widens types. The partition columns
        are checked before any schema change, so a refused output leaves the schema as it was
        (an output the write then refuses, rows outside the partition, keeps the evolution). An
        upsert into a ``partial-update`` table may lack columns: they keep their values.

        Raises:
            TableDefinitionError: metadata keys that contradict the existing table.
            PartitionMappingError: ``partition_expr`` columns that are not partition keys.
            IncompatibleSchemaError: a schema change that is not additive.
        """
        catalog = self.open()
        primary_keys = list(metadata.get("primary_keys") or ())
        partition_keys = list(metadata.get("partition_keys") or [d.column for d in dims])
        if not catalog.table_exists(identifier):
            catalog.create_database(identifier.split(".", 1)[0], exist_ok=True)
            options = {str(k): str(v) for k, v in dict(metadata.get("table_options") or {}).items()}
            # exist_ok: a concurrent materialization may create it first; it is checked as any existing one
            catalog.create_table(
                identifier, schema=schema, partition_keys=partition_keys, primary_keys=primary_keys, options=options, exist_ok=True
            )
        table = catalog.get_table(identifier)
        if metadata.get("primary_keys") is not None and list(table.primary_keys) != primary_keys:
            raise TableDefinitionError(f"table {identifier} has primary keys {list(table.primary_keys)}, the asset declares {primary_keys}")
        if metadata.get("partition_keys") is not None and list(table.partition_keys) != partition_keys:
            raise TableDefinitionError(
                f"table {identifier} has partition keys {list(table.partition_keys)}, the asset declares {partition_keys}"
            )
        parts.check_partition_columns(dims, table.partition_keys, identifier)  # before any schema change
        partial = mode == "upsert" and table.schema.options.get("merge-engine") == "partial-update"
        last: SchemaChangeError | None = None
        for _ in range(_EVOLVE_ATTEMPTS):
            changes = evolution(table.arrow_schema, schema, identifier, partial=partial)
            if not changes:
                return table
            try:
                return catalog.alter_table(identifier, changes)
            except SchemaChangeError as exc:
                table = catalog.get_table(identifier)  # another writer may have evolved it first
                if not evolution(table.arrow_schema, schema, identifier, partial=partial):
                    return table
                last = exc
        raise IncompatibleSchemaError(f"table {identifier}: the schema change was refused: {last}") from last

    # -- inputs --------------------------------------------------------------------------------
    def load_input(self, context: dg.InputContext) -> Any:
        """The upstream asset's table (its partitions this input depends on, the input
        metadata's ``columns``) as the input's annotated type.

        Raises:
            TableNotFoundError: the upstream table does not exist (never materialized).
            PartitionMappingError: partitions that do not map onto the table's partition columns.
            SchemaMismatchError: a ``columns`` entry the table lacks.
            UnsupportedOutputTypeError: an annotation none of the supported DataFrame kinds.
        """
        if not context.has_asset_key:
            raise TableDefinitionError("PaimonIOManager loads asset inputs only (this input has no asset key)")
        upstream = context.upstream_output
        upstream_metadata = dict((upstream.definition_metadata if upstream is not None else None) or {})
        identifier = self.table_identifier(context.asset_key, upstream_metadata)
        table = self.open().get_table(identifier)
        columns = (context.definition_metadata or {}).get("columns")
        predicate = None
        if context.has_asset_partitions:
            partitions_def = context.asset_partitions_def
            dims = parts.dimensions(partitions_def, upstream_metadata, context.asset_key.to_user_string())
            keys = list(context.asset_partition_keys)
            predicate = parts.partition_filter(dims, keys, partitions_def, table.arrow_schema, identifier) if dims else None
        return read_as(table, context.dagster_type.typing_type, columns=list(columns) if columns else None, filter=predicate)
