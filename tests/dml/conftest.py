"""The Java interop fixtures (``java``, ``warehouse``, ``catalog``) shared with tests/interop."""

from tests.interop.conftest import catalog, java, warehouse  # noqa: F401 - fixtures, found by name
