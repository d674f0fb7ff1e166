"""Dagster's I/O manager for Paimon tables (``PaimonIOManager``) and its errors."""

from resources.paimon.errors import IncompatibleSchemaError, PartitionMappingError, TableDefinitionError, UnsupportedOutputTypeError
from resources.paimon.io_manager import PaimonIOManager

__all__ = ["IncompatibleSchemaError", "PaimonIOManager", "PartitionMappingError", "TableDefinitionError", "UnsupportedOutputTypeError"]
