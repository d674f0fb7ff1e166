"""The documentation site (``mkdocs.yml``, ``docs/``): every page's Python code blocks run as
written (each page in a fresh namespace on its own warehouse, as ``tests/test_readme.py`` runs the
README), every page is in the site's navigation, and the API reference documents every name
``lakestore`` exports and every command of the command line; the public methods of ``Catalog``,
``Table`` (and its ``maintenance`` and ``manage`` namespaces), ``TableWrite`` and ``TableCommit``
have docstrings, and the main entry points name the errors they raise. ``mkdocs build --strict``
itself runs in ``scripts/test.sh``."""

from __future__ import annotations

import argparse
import inspect
import re
from pathlib import Path

import pytest

import lakestore
import lakestore.errors
from lakestore.catalog import FileSystemCatalog, HiveCatalog, JdbcCatalog, RestCatalog
from lakestore.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
_BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)


def _python_blocks(page: str) -> list[str]:
    return _BLOCK.findall((DOCS / page).read_text())


def _page_code(page: str) -> str:
    """The page's Python blocks as one program whose line numbers are the page's (tracebacks
    point into the page)."""
    text = (DOCS / page).read_text()
    lines: list[str] = []
    for match in _BLOCK.finditer(text):
        first = text.count("\n", 0, match.start(1))  # 0-based line of the block's first line
        lines += [""] * (first - len(lines))
        lines += match.group(1).splitlines()
    return "\n".join(lines) + "\n"


def _nav_pages() -> set[str]:
    text = (ROOT / "mkdocs.yml").read_text()
    nav = text.split("\nnav:", 1)[1]
    return set(re.findall(r"([\w/.-]+\.md)\s*$", nav, flags=re.M))


def test_every_page_is_in_the_nav():
    assert PAGES, "no docs pages"
    assert sorted(set(PAGES) - _nav_pages()) == [], "add the page to the nav in mkdocs.yml"
    assert sorted(_nav_pages() - set(PAGES)) == [], "the nav in mkdocs.yml names pages docs/ lacks"


def _runnable_pages() -> list:
    # a page driving Spark reuses the process's SparkSession when one runs (getOrCreate)
    return [pytest.param(p, marks=[pytest.mark.spark] if "lakestore.spark" in _page_code(p) else []) for p in PAGES if _python_blocks(p)]


@pytest.mark.parametrize("page", _runnable_pages())
def test_page_code_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = _page_code(page).replace('"/tmp/warehouse', '"' + str(tmp_path / "warehouse"))
    namespace: dict = {"__name__": f"docs/{page}"}
    exec(compile(code, f"docs/{page}", "exec"), namespace)  # noqa: S102 - the page's own code


def _reference_text() -> str:
    return "\n".join(p.read_text() for p in sorted((DOCS / "reference").glob("*.md")))


def test_api_reference_documents_every_export():
    text = _reference_text()
    directives = set(re.findall(r"^::: ([\w.]+)\s*$", text, flags=re.M))
    missing = []
    for name in lakestore.__all__:
        obj = getattr(lakestore, name)
        in_errors_module = "lakestore.errors" in directives and getattr(obj, "__module__", None) == "lakestore.errors"
        if f"lakestore.{name}" not in directives and not in_errors_module:
            missing.append(name)
    assert missing == []
    assert "lakestore.TableScan" in directives  # what table.scan() returns


def test_cli_reference_names_every_command():
    text = (DOCS / "reference" / "cli.md").read_text()
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert len(commands) > 15
    missing = [name for name in [*commands, "serve", "serve-admin"] if f"`{name}" not in text and f"lakestore {name}" not in text]
    assert missing == []


def _public_methods(cls: type) -> dict[str, object]:
    out = {}
    for name, obj in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if isinstance(obj, property):
            obj = obj.fget
        if callable(obj):
            out[name] = obj
    return out


@pytest.mark.parametrize(
    "cls",
    [
        lakestore.Catalog,
        FileSystemCatalog,
        JdbcCatalog,
        HiveCatalog,
        RestCatalog,
        lakestore.Table,
        lakestore.TableMaintenance,
        lakestore.TableManagement,
        lakestore.TableWrite,
        lakestore.TableCommit,
    ],
)
def test_public_methods_have_docstrings(cls):
    # the methods and properties the class itself defines (an override needs its own docstring:
    # the reference renders it, and what it raises may differ)
    methods = _public_methods(cls)
    assert len(methods) >= 3
    undocumented = sorted(name for name, obj in methods.items() if not (inspect.getdoc(obj) or "").strip())
    assert undocumented == []
    assert (cls.__doc__ or "").strip()


def test_main_entry_points_say_what_they_raise():
    entry_points = [
        lakestore.Catalog.create_table,
        lakestore.Catalog.get_table,
        lakestore.Catalog.alter_table,
        lakestore.Table.write_arrow,
        lakestore.Table.scan,
        lakestore.Table.to_arrow,
        lakestore.Table.compact,
        lakestore.TableMaintenance.expire_snapshots,
        lakestore.TableMaintenance.remove_orphan_files,
        lakestore.TableManagement.create_tag,
        lakestore.TableManagement.create_branch,
        lakestore.TableManagement.rollback_to,
        lakestore.Table.new_write,
        lakestore.TableWrite.write_arrow,
        lakestore.TableCommit.commit,
    ]
    silent = [f.__qualname__ for f in entry_points if "Raises:" not in (f.__doc__ or "")]
    assert silent == []
    errors = {name for name, obj in vars(lakestore.errors).items() if isinstance(obj, type) and issubclass(obj, BaseException)}
    for f in entry_points:
        raises = (f.__doc__ or "").split("Raises:", 1)[1].split("Example::", 1)[0]
        named = set(re.findall(r"^\s+(\w+):", raises, flags=re.M))
        assert named and named <= errors | {"ValueError", "ImportError", "TypeError"}, (f.__qualname__, named - errors)
