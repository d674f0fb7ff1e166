"""The Hive catalog tests share the session's Hive Metastore (``tests/hms.py``)."""

from tests.hms import metastore  # noqa: F401 - the session's Hive Metastore, a fixture
from tests.io.conftest import bucket, s3_server  # noqa: F401 - moto's S3 server, for the lock on object storage
