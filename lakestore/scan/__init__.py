"""Batch reads of a table: the immutable scan object (``Table.scan()`` returns a
:class:`TableScan`) and what executes it over the table's ``FileStore`` (:class:`StoreScan`).

- ``lakestore.scan.table_scan``: ``ScanSpec`` (what a read asks for), ``TableScan`` (refine and
  run it), ``ScanArgs`` (the keyword arguments of ``Table.scan`` and its shortcuts).
- ``lakestore.scan.executor``: ``StoreScan``: the snapshot and schema a read sees (time travel,
  the table's ``scan.*`` options), its splits, incremental ranges, fallback branches, the rows.
"""

from lakestore.scan.executor import StoreScan
from lakestore.scan.table_scan import ScanArgs, ScanSource, ScanSpec, TableScan, scan_spec

__all__ = ["ScanArgs", "ScanSource", "ScanSpec", "StoreScan", "TableScan", "scan_spec"]
