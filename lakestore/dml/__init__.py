"""Row-level changes: ``Table.delete``, ``Table.update`` and ``Table.upsert``, written as Paimon
2.0's batch ``DELETE`` / ``UPDATE`` (paimon-spark, Paimon's Flink sink) write them, each in one
commit through the table's own write and commit.

- ``lakestore.dml.checks``: what each operation accepts (columns, values, merge engines).
- ``lakestore.dml.operations``: primary-key tables (-D and +U rows), whole-partition deletes.
- ``lakestore.dml.append_vectors``: append tables with deletion vectors.
"""

from lakestore.dml.operations import delete_rows, update_rows, upsert_rows
from lakestore.dml.target import RowChangeTable

__all__ = ["RowChangeTable", "delete_rows", "update_rows", "upsert_rows"]
