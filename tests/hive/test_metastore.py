"""The session's Hive Metastore answers on its port (the fixture the Hive tests share)."""

from __future__ import annotations

from tests.hms import Metastore


def test_metastore_starts_on_loopback(metastore: Metastore):
    print(f"metastore started in {metastore.start_seconds:.2f} s on {metastore.uri}")
    assert metastore.uri.startswith("thrift://127.0.0.1:")
