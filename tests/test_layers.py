"""The engine's layering, checked on the source: imports, type-only ones too, only point down, the
engine never imports Dagster, and no function imports a lakestore module to dodge a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "lakestore"

# Lowest first. A module may import from lower layers and from its own package; packages that
# share a layer (read and write) never import each other.
LAYERS: list[set[str]] = [
    {"errors", "units"},
    {"io"},
    {"format"},
    {"meta"},
    {"merge"},
    {"read", "write"},
    {"commit"},
    {"store"},
    {"compact"},
    {"iceberg"},
    {"lifecycle", "dml"},
    {"system"},
    {"scan"},
    {"maintenance", "manage"},
    {"table"},
    {"catalog"},
    {"rest"},
    {"spark", "cli"},
    {"__init__"},
]
LAYER_OF = {name: index for index, names in enumerate(LAYERS) for name in names}
# Optional dependencies imported where they are used, so lakestore works without them.
OPTIONAL = {"polars", "duckdb", "boto3", "botocore", "psycopg", "pyspark", "starlette", "uvicorn", "ray", "hive_metastore", "thrift"}


def _unit(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[0]


def _imports(tree: ast.Module) -> list[tuple[ast.stmt, str, bool]]:
    """(node, module, under ``if TYPE_CHECKING``) of every import in the module."""
    out: list[tuple[ast.stmt, str, bool]] = []

    def visit(node: ast.AST, type_checking: bool) -> None:
        for child in ast.iter_child_nodes(node):
            guarded = type_checking
            if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
                guarded = True
            if isinstance(child, ast.Import):
                out.extend((child, alias.name, guarded) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                out.append((child, child.module, guarded))
            visit(child, guarded)

    visit(tree, False)
    return out


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path: Path):
    """Runtime and type-only (``if TYPE_CHECKING:``) imports alike: no cycle even for types."""
    unit = _unit(path)
    assert unit in LAYER_OF, f"{unit} is not placed in LAYERS"
    for node, module, type_only in _imports(ast.parse(path.read_text())):
        if module == "lakestore":
            # ``import lakestore`` and ``from lakestore import col`` reach the package's front
            # door (the top layer); ``from lakestore import errors`` names a module
            names = [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else ["__init__"]
            targets = [n if n in LAYER_OF else "__init__" for n in names]
        elif module.startswith("lakestore."):
            targets = [module.split(".")[1]]
        else:
            continue
        kind = " (type-only)" if type_only else ""
        for target in targets:
            where = f"{path.name}:{node.lineno} imports {module}{kind}"
            assert target == unit or LAYER_OF[target] < LAYER_OF[unit], f"{where}: {unit} may not depend on {target}"


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_engine_has_no_dagster_and_no_function_level_imports(path: Path):
    tree = ast.parse(path.read_text())
    for _, module, _ in _imports(tree):
        assert not module.startswith("dagster"), f"{path.name} imports {module}"
    for function in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
        for node in ast.walk(function):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert all(n.split(".")[0] in OPTIONAL for n in names), f"{path.name}:{node.lineno} imports {names} inside {function.name}"


PROJECT = PACKAGE.parent
# The Dagster project's own layering: resources know only the engine, assets build on resources,
# pipelines (jobs, schedules, sensors, definitions) only wire assets together.
PROJECT_LAYERS = {"resources": 0, "assets": 1, "pipelines": 2}


@pytest.mark.parametrize(
    "path",
    sorted(p for package in PROJECT_LAYERS for p in (PROJECT / package).rglob("*.py")),
    ids=lambda p: str(p.relative_to(PROJECT)),
)
def test_the_dagster_project_imports_point_down(path: Path):
    unit = path.relative_to(PROJECT).parts[0]
    for node, module, _ in _imports(ast.parse(path.read_text())):
        target = module.split(".")[0]
        if target in PROJECT_LAYERS and target != unit:
            where = f"{path.name}:{node.lineno} imports {module}"
            assert PROJECT_LAYERS[target] < PROJECT_LAYERS[unit], f"{where}: {unit} may not depend on {target}"


# The commit point: a snapshot is published only by ``lakestore.commit.snapshot_commit`` (the
# ``SnapshotCommit`` the catalog chose). ``FileIO.try_publish`` / ``try_publish_under_lock`` are
# the file system's atomic create-if-absent, and ``MetadataPublisher.try_publish`` is the same
# under the catalog lock; these modules may call them, each for a reason:
PUBLISH_CALLERS = {
    "commit/snapshot_commit.py": "RenamingSnapshotCommit publishes snapshot-N with the store's publisher",
    "meta/schema.py": "SchemaManager publishes schema-N (not a snapshot)",
    "lifecycle/tags.py": "TagManager creates and renames tag-<name> (not a snapshot)",
    "io/publish.py": "MetadataPublisher: the FileIO's primitive, under the catalog lock when there is one",
    "io/fileio.py": "the primitive itself: try_publish_under_lock is try_publish where link(2) is atomic",
}
PUBLISH_METHODS = ("try_publish", "try_publish_under_lock")


def _publish_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text())
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PUBLISH_METHODS
    ]


def test_only_the_snapshot_commit_publishes_a_snapshot():
    """Nothing below ``commit/`` publishes a snapshot (no ``SnapshotManager.try_publish``), and
    only the modules in ``PUBLISH_CALLERS`` call the file system's create-if-absent."""
    callers = {str(p.relative_to(PACKAGE)): lines for p in _sources() if (lines := _publish_calls(p))}
    unexpected = {name: lines for name, lines in callers.items() if name not in PUBLISH_CALLERS}
    assert not unexpected, f"try_publish called outside PUBLISH_CALLERS: {unexpected} (a snapshot goes through FileStore.snapshot_commit)"
    stale = sorted(set(PUBLISH_CALLERS) - set(callers))
    assert not stale, f"PUBLISH_CALLERS lists modules that no longer call try_publish: {stale}"
    snapshot_module = (PACKAGE / "meta" / "snapshot.py").read_text()
    assert "try_publish" not in snapshot_module, "meta/snapshot.py publishes snapshots (the commit point is commit/snapshot_commit.py)"


# "FileIO only moves bytes": the catalog lock (``io/lock.py``, ``io/hive_lock.py``) is held by the
# table's publisher (``io/publish.py``), never by a file system. These modules define FileIOs.
FILE_IO_MODULES = ("io/fileio.py", "io/s3.py")
LOCK_MODULES = ("lakestore.io.lock", "lakestore.io.hive_lock", "lakestore.io.publish")


def test_no_file_io_takes_or_holds_a_lock():
    """No FileIO module imports a lock (type-only imports included), no FileIO class has a
    ``lock`` attribute or parameter, and every FileIO subclass lives in ``FILE_IO_MODULES``."""
    defined: dict[str, str] = {}
    for path in _sources():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                (isinstance(b, ast.Name) and b.id in ("FileIO", "LocalFileIO", "S3FileIO")) for b in node.bases
            ):
                defined[node.name] = str(path.relative_to(PACKAGE))
    assert defined and set(defined.values()) <= set(FILE_IO_MODULES), f"FileIO classes outside {FILE_IO_MODULES}: {defined}"
    for name in FILE_IO_MODULES:
        tree = ast.parse((PACKAGE / name).read_text())
        imported = [module for _, module, _ in _imports(tree)]
        assert not [m for m in imported if m in LOCK_MODULES], f"{name} imports a lock: {imported}"
        for node in ast.walk(tree):
            if isinstance(node, ast.arg):
                assert "lock" not in node.arg.lower(), f"{name}:{node.lineno} a FileIO takes a lock ({node.arg})"
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                assert "lock" not in node.attr.lower(), f"{name}:{node.lineno} a FileIO holds a lock (self.{node.attr})"


# The read side: what a user's scan means (time travel, ``scan.*`` options, incremental and
# changelog scans, fallback branches, the plan) lives in ``lakestore/scan/``; ``read/`` holds the
# mechanism (``read/planner.py`` plans one snapshot's files into splits, ``read/split_read.py``
# merges them). Layers keep ``scan/`` out of reach below it; these modules outside it plan
# splits of a snapshot directly, each for a reason:
PLAN_CALLERS = {
    "dml/target.py": "DELETE/UPDATE/MERGE find the rows they change in the base snapshot, below the scan layer",
    "dml/append_vectors.py": "deletion vectors of an append table: row positions in the base snapshot's files",
    "system/rows.py": "system tables ($ro, row_tracking...) read raw files of one snapshot",
    "table.py": "writes read the base snapshot (cross-partition key bootstrap, column updates); the stream's full phase",
}


def test_only_the_scan_layer_plans_reads():
    callers = {
        str(p.relative_to(PACKAGE))
        for p in _sources()
        if not str(p.relative_to(PACKAGE)).startswith(("scan/", "read/"))
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "ScanPlanner"
    }
    assert callers <= set(PLAN_CALLERS), f"ScanPlanner used outside scan/ and PLAN_CALLERS: {sorted(callers - set(PLAN_CALLERS))}"
    assert set(PLAN_CALLERS) <= callers, f"PLAN_CALLERS lists modules that no longer plan: {sorted(set(PLAN_CALLERS) - callers)}"
