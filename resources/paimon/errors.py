"""The errors ``PaimonIOManager`` raises on purpose, each a ``lakestore.LakestoreError`` of the
engine's kind (a schema refusal is a ``SchemaChangeError``, a partition that does not map a
``PartitionValueError``), so callers catch them as they catch lakestore's own."""

from __future__ import annotations

from lakestore.errors import CatalogError, LakestoreError, PartitionValueError, SchemaChangeError


class IncompatibleSchemaError(SchemaChangeError):
    """An output's schema differs from its table's in a way Paimon schema evolution cannot apply
    (a column the output lacks, a narrowing or unrelated type change); nothing was written."""


class PartitionMappingError(PartitionValueError):
    """An asset's Dagster partitions do not map onto the table's partition columns: no
    ``partition_expr``, a column that is not a partition key, or a column type a partition key
    cannot become."""


class TableDefinitionError(CatalogError):
    """Definition metadata (``primary_keys``, ``partition_keys``, ``write_mode``) contradicts the
    existing table or itself."""


class UnsupportedOutputTypeError(LakestoreError, TypeError):
    """An output (or an input's annotation) the I/O manager has no conversion for."""
