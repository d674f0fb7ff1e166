"""Shared marks of the deletion-vector tests."""

from __future__ import annotations

import pytest

from lakestore.errors import OptionError
from lakestore.meta.options import validate


def vector_writes_enabled() -> bool:
    try:
        validate({"deletion-vectors.enabled": "true"}, strict=True)
    except OptionError:
        return False
    return True


# Writing deletion vectors needs commit messages that carry index files and a commit that writes
# the index manifest; until then lakestore refuses the option for writes (reads work).
needs_vector_writes = pytest.mark.xfail(
    not vector_writes_enabled(),
    reason="deletion-vector writes wait for index files in commit messages",
    raises=OptionError,
    strict=True,
)
