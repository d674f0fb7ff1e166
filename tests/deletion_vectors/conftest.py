"""The Java interop fixtures (``java``, ``java_any``, ``java09``, ``warehouse``, ``catalog``) shared
with tests/interop."""

from tests.interop.conftest import catalog, java, java09, java_any, warehouse  # noqa: F401 - fixtures, found by name
