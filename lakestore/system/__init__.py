"""Paimon's system tables (``db.t$snapshots``, ``$files``, ``$audit_log``, ...): a table's
metadata and rows as Arrow tables with Paimon 2.0.0's columns. ``Table.inspect`` and
``Catalog.get_system_table("db.t$files")`` reach them; this package takes the table's parts
(``TableState``), never the table itself."""

from lakestore.system.source import TableState, TimeTravel
from lakestore.system.tables import SYSTEM_TABLES, SystemTable, SystemTables, split_system_table

__all__ = ["SYSTEM_TABLES", "SystemTable", "SystemTables", "TableState", "TimeTravel", "split_system_table"]
