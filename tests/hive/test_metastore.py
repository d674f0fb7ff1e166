"""The session's Hive Metastore answers on its port (the fixture the Hive tests share)."""

from __future__ import annotations

from tests.hms import Metastore


def test_metastore_starts_on_loopback(metastore: Metastore):
    print(
        f"schema tool {metastore.schema_seconds:.2f} s; metastore port open {metastore.start_seconds:.2f} s after launch ({metastore.uri})"
    )
    assert metastore.uri.startswith("thrift://127.0.0.1:")
