"""Branches (``branch/branch-<name>/``): a branch has its own snapshots, schemas, tags and
consumers under that directory, and shares the table's data and manifest files."""

from __future__ import annotations

import re

from lakestore.errors import InvalidIdentifierError
from lakestore.io.fileio import FileIO
from lakestore.meta.names import check_name

MAIN_BRANCH = "main"
BRANCH_DIR = "branch"
BRANCH_PREFIX = "branch-"
_NAME = re.compile(r"[A-Za-z0-9_\-]+")


def validate_branch_name(name: str) -> str:
    """Paimon's rules: not ``main``, not blank, not only digits (those read as snapshot ids)."""
    check_name(name, "branch", pattern=_NAME, prefix=BRANCH_PREFIX)
    if name == MAIN_BRANCH:
        raise InvalidIdentifierError(f"{MAIN_BRANCH!r} is the default branch and cannot be created or deleted")
    if name.isdigit():
        raise InvalidIdentifierError(f"branch name {name!r} cannot be only digits")
    return name


def branch_root(table_path: str, branch: str) -> str:
    """The directory holding ``branch``'s snapshots, schemas, tags and consumers."""
    if branch == MAIN_BRANCH:
        return table_path
    return f"{table_path}/{BRANCH_DIR}/{BRANCH_PREFIX}{validate_branch_name(branch)}"


def branch_names(file_io: FileIO, table_path: str) -> list[str]:
    """The table's branches other than main."""
    names = file_io.list_names(f"{table_path}/{BRANCH_DIR}")
    return sorted(n[len(BRANCH_PREFIX) :] for n in names if n.startswith(BRANCH_PREFIX))
