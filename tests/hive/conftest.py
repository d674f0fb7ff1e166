"""The Hive catalog tests share the session's Hive Metastore (``tests/hms.py``)."""

from tests.hms import metastore  # noqa: F401 - the session's Hive Metastore, a fixture
