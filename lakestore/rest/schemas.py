"""The schemas the catalog server trusts: the ones it wrote itself (create table, alter table,
create branch, fast-forward) and the ones a table held when the server first served it.

Changing a schema is an admin operation, but a principal with a ``write`` grant writes the
table's data files itself and so could also write ``schema/schema-N``. The server therefore
records the SHA-256 of every schema file it trusts in a ledger of its own, outside every table
(``<warehouse>/.lakestore-schemas/<db>.db/<table>/<branch>/.lakestore-schema-<id>``: no table's
vended credentials reach it), and

- serves a table at its newest trusted schema (a newer schema file it did not write is ignored);
- refuses a commit naming a schema that is not trusted, or whose file no longer has the
  recorded digest (rewritten in place).

A table the server meets without a ledger (created or altered by an admin with direct access to
the warehouse, or before this ledger existed) is adopted as found: its schema files at that
moment are recorded. From then on a schema file appears only through the server; an admin who
re-creates a table outside the server drops it through the server first (which forgets its
ledger), or removes the table's ledger folder to have it adopted again.
"""

from __future__ import annotations

import hashlib
import threading

from lakestore.io.fileio import FileIO
from lakestore.meta.branch import MAIN_BRANCH, branch_root
from lakestore.meta.schema import SchemaManager, TableSchema

LEDGER_DIR = ".lakestore-schemas"
_PREFIX = ".lakestore-schema-"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class SchemaLedger:
    """The trusted schema digests of every table of one warehouse (thread-safe)."""

    def __init__(self, file_io: FileIO, warehouse: str) -> None:
        self.file_io = file_io
        self.warehouse = warehouse.rstrip("/")
        self._known: dict[str, dict[int, str]] = {}  # ledger folder -> {schema id: digest}
        self._lock = threading.Lock()

    # -- where ---------------------------------------------------------------------------------
    def folder(self, table_path: str, branch: str | None = None) -> str:
        """The ledger folder of a table (all branches: ``branch=None``) or of one branch."""
        path = table_path.rstrip("/")
        if path.startswith(self.warehouse + "/"):
            relative = path[len(self.warehouse) + 1 :]
        else:  # a catalog placing tables elsewhere: one folder per table path
            relative = "external/" + hashlib.sha256(path.encode()).hexdigest()
        base = f"{self.warehouse}/{LEDGER_DIR}/{relative}"
        return base if branch is None else f"{base}/{branch}"

    # -- reads ---------------------------------------------------------------------------------
    def _recorded(self, folder: str) -> dict[int, str] | None:
        with self._lock:
            cached = self._known.get(folder)
        if cached is not None:
            return cached
        names = [n for n in self.file_io.list_names(folder) if n.startswith(_PREFIX) and n[len(_PREFIX) :].isdigit()]
        if not names:
            return None
        found = {int(n[len(_PREFIX) :]): self.file_io.read_bytes(f"{folder}/{n}").decode().strip() for n in names}
        with self._lock:
            self._known[folder] = found
        return found

    def trusted(self, table_path: str, branch: str = MAIN_BRANCH) -> dict[int, str]:
        """{schema id: digest} of the schemas trusted for the table's branch (adopting the
        table as found when it has no ledger yet)."""
        folder = self.folder(table_path, branch)
        recorded = self._recorded(folder)
        if recorded is None:
            recorded = self.adopt(table_path, branch)
        return recorded

    def is_trusted(self, table_path: str, branch: str, schema_id: int) -> bool:
        """Whether ``schema-<schema_id>`` is trusted and its file still has the recorded digest."""
        expected = self.trusted(table_path, branch).get(schema_id)
        if expected is None:
            return False
        manager = SchemaManager(self.file_io, branch_root(table_path, branch))
        try:
            return digest(self.file_io.read_bytes(manager.path(schema_id))) == expected
        except FileNotFoundError:
            return False

    def latest_trusted(self, table_path: str, branch: str = MAIN_BRANCH) -> TableSchema | None:
        """The newest trusted schema whose file still has its recorded digest."""
        manager = SchemaManager(self.file_io, branch_root(table_path, branch))
        for schema_id in sorted(self.trusted(table_path, branch), reverse=True):
            if self.is_trusted(table_path, branch, schema_id):
                return manager.get(schema_id)
        return None

    # -- writes --------------------------------------------------------------------------------
    def record(self, table_path: str, branch: str, schema_id: int, data: bytes) -> None:
        """Trust ``schema-<schema_id>`` with content ``data`` (the bytes the server wrote)."""
        folder = self.folder(table_path, branch)
        value = digest(data)
        self.file_io.write_bytes(f"{folder}/{_PREFIX}{schema_id}", value.encode())
        with self._lock:
            known = self._known.get(folder)
            if known is not None:
                known[schema_id] = value

    def adopt(self, table_path: str, branch: str = MAIN_BRANCH) -> dict[int, str]:
        """Trust every schema file the branch holds now (its current schema files replace what
        the ledger held for it)."""
        folder = self.folder(table_path, branch)
        manager = SchemaManager(self.file_io, branch_root(table_path, branch))
        found: dict[int, str] = {}
        for schema_id in manager.list_ids():
            try:
                data = self.file_io.read_bytes(manager.path(schema_id))
            except FileNotFoundError:
                continue
            found[schema_id] = digest(data)
        with self._lock:
            self._known.pop(folder, None)
        self.file_io.delete_dir(folder)
        for schema_id, value in found.items():
            self.file_io.write_bytes(f"{folder}/{_PREFIX}{schema_id}", value.encode())
        with self._lock:
            if found:
                self._known[folder] = dict(found)
        return found

    def forget(self, table_path: str, branch: str | None = None) -> None:
        """Drop the ledger of a table (``branch=None``: every branch) or of one branch."""
        folder = self.folder(table_path, branch)
        with self._lock:
            for key in [k for k in self._known if k == folder or k.startswith(folder + "/")]:
                del self._known[key]
        self.file_io.delete_dir(folder)

    def move(self, source_path: str, target_path: str) -> None:
        """The ledger of a renamed table follows it (every branch)."""
        source, target = self.folder(source_path), self.folder(target_path)
        for branch in self.file_io.list_names(source):
            for name in self.file_io.list_names(f"{source}/{branch}"):
                if name.startswith(_PREFIX):
                    self.file_io.write_bytes(f"{target}/{branch}/{name}", self.file_io.read_bytes(f"{source}/{branch}/{name}"))
        self.forget(source_path)
        with self._lock:  # re-read from the files
            for key in [k for k in self._known if k.startswith(target + "/")]:
                del self._known[key]
