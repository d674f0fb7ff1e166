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
    # an error class defined anywhere else in the engine would escape the test above
    import pathlib

    package = pathlib.Path(lakestore.__file__).parent
    stray = []
    for path in package.rglob("*.py"):
        if path.name in ("errors.py", "cli.py"):  # cli.UsageError never leaves the command line
            continue
        for line in path.read_text().splitlines():
            if line.startswith("class ") and ("Error(" in line or "Exception)" in line) and "UnsupportedPaimonTypeError" not in line:
                stray.append(f"{path.relative_to(package)}: {line}")
    assert stray == []


def test_schema_changes_and_scan_types_are_exported():
    for name in ("AddColumn", "DropColumn", "RenameColumn", "UpdateColumnType", "UpdateComment", "SetOption", "RemoveOption"):
        assert getattr(lakestore, name) is getattr(lakestore.meta.schema_change, name)
    assert lakestore.Split.__module__ == "lakestore.read.scan"
    assert lakestore.StreamScan.__module__ == "lakestore.read.changes"
    assert sorted(lakestore.__all__) == lakestore.__all__ and len(set(lakestore.__all__)) == len(lakestore.__all__)
    for name in lakestore.__all__:
        assert hasattr(lakestore, name), name
