"""The public face: every error and every class a caller needs is importable from ``lakestore``."""

from __future__ import annotations

import inspect

import lakestore
import lakestore.errors
import lakestore.meta.schema_change


def test_every_error_is_exported_and_documented():
    errors = [
        obj
        for _, obj in inspect.getmembers(lakestore.errors, inspect.isclass)
        if issubclass(obj, lakestore.LakestoreError) and obj.__module__ == "lakestore.errors"
    ]
    assert len(errors) > 20
    missing = [e.__name__ for e in errors if getattr(lakestore, e.__name__, None) is not e]
    assert missing == []
    undocumented = [e.__name__ for e in errors if not (e.__doc__ or "").strip()]
    assert undocumented == []


def test_errors_live_in_one_module():
    # an error class a caller can meet, defined anywhere else in the engine, would escape the test above
    import importlib
    import pkgutil

    stray = []
    for module in pkgutil.walk_packages(lakestore.__path__, "lakestore."):
        loaded = importlib.import_module(module.name)
        for name, obj in inspect.getmembers(loaded, inspect.isclass):
            if issubclass(obj, lakestore.LakestoreError) and obj.__module__ == module.name and module.name != "lakestore.errors":
                stray.append(f"{module.name}.{name}")
    assert stray == []


def test_schema_changes_and_scan_types_are_exported():
    for name in ("AddColumn", "DropColumn", "RenameColumn", "UpdateColumnType", "UpdateComment", "SetOption", "RemoveOption"):
        assert getattr(lakestore, name) is getattr(lakestore.meta.schema_change, name)
    assert lakestore.Split.__module__ == "lakestore.read.planner"
    assert lakestore.StreamScan.__module__ == "lakestore.scan.changes"
    # the types callers receive from table.scan(), table.store and the commit protocol
    assert lakestore.TableScan.__module__ == "lakestore.scan.table_scan" and lakestore.ScanSpec.__module__ == "lakestore.scan.table_scan"
    assert lakestore.FileStore.__module__ == "lakestore.store" and lakestore.CommitId.__module__ == "lakestore.commit.protocol"
    assert sorted(lakestore.__all__) == lakestore.__all__ and len(set(lakestore.__all__)) == len(lakestore.__all__)
    for name in lakestore.__all__:
        assert hasattr(lakestore, name), name


def test_methods_that_moved_into_the_namespaces_still_answer_with_a_deprecation(tmp_path):
    import pyarrow as pa
    import pytest

    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=pa.schema([pa.field("id", pa.int64(), nullable=False)]), primary_keys=["id"])
    table.write_arrow(pa.table({"id": [1, 2]}))
    with pytest.warns(DeprecationWarning, match=r"Table\.create_tag is deprecated .* use table\.manage\.create_tag"):
        table.create_tag("v1")
    with pytest.warns(DeprecationWarning, match=r"use table\.manage\.tags"):
        assert [t.name for t in table.tags()] == ["v1"]
    assert [t.name for t in table.manage.tags()] == ["v1"]  # the new place saw the old call's tag
    with pytest.warns(DeprecationWarning, match=r"use table\.maintenance\.check"):
        assert table.check() == table.maintenance.check()
    with pytest.raises(AttributeError, match="no attribute 'create_tags'"):
        table.create_tags  # noqa: B018 - a misspelt name is still an AttributeError


# Public methods that cannot raise on their own (pure, over in-memory values), so their
# docstrings have no ``Raises:`` section.
CANNOT_RAISE = {
    "Catalog.close",  # closes what is open; a catalog without connections has nothing to close
    "CommitCallback.enabled",  # reads the table's typed options
    "CommitMessage.written_files",
    "CommitMessage.to_bytes",
    "CommitProperties.runs",
    "FileStore.manifests",  # the store's cached manifest store
    "FileStore.split_reader",  # builds a reader; reading with it raises what TableScan.to_arrow does
    "Predicate.to_arrow",
    "Predicate.columns",
    "Predicate.might_match",
    "Snapshot.to_dict",
    "Snapshot.to_json",
    "TableScan.select",  # columns are checked when the scan runs
    "TableWrite.close",  # releases threads; the files stay
    "Tag.expired",
    "col",  # the column is checked when the scan runs
}


def test_every_public_method_says_what_it_raises():
    missing = []
    for name in lakestore.__all__:
        obj = getattr(lakestore, name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for member, value in vars(obj).items():
                if member.startswith("_") or isinstance(value, property):
                    continue
                function = getattr(value, "__func__", value)
                if not callable(function):
                    continue
                doc = inspect.getdoc(function) or ""
                if "Raises:" not in doc and "See :meth:" not in doc and f"{name}.{member}" not in CANNOT_RAISE:
                    missing.append(f"{name}.{member}")
        elif inspect.isfunction(obj) and "Raises:" not in (inspect.getdoc(obj) or "") and name not in CANNOT_RAISE:
            missing.append(name)
    assert not missing, f"public methods without a Raises: section: {missing}"
    stale = {n for n in CANNOT_RAISE if "Raises:" in (inspect.getdoc(_resolve(n)) or "")}
    assert not stale, f"CANNOT_RAISE lists methods that document what they raise: {sorted(stale)}"


def _resolve(dotted: str):
    obj = lakestore
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj
