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
    assert lakestore.Split.__module__ == "lakestore.read.scan"
    assert lakestore.StreamScan.__module__ == "lakestore.read.changes"
    assert sorted(lakestore.__all__) == lakestore.__all__ and len(set(lakestore.__all__)) == len(lakestore.__all__)
    for name in lakestore.__all__:
        assert hasattr(lakestore, name), name
