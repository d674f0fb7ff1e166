import pyarrow as pa
import pytest

from .util import make_catalog

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.string())])

# Many small commits racing each other: retry quickly and often rather than give up.
FAST_RETRY = {"commit.min-retry-wait": "1 ms", "commit.max-retry-wait": "50 ms", "commit.max-retries": "60"}


@pytest.fixture
def append_table(tmp_path):
    catalog = make_catalog(tmp_path / "wh")
    return catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], options=FAST_RETRY)


@pytest.fixture
def pk_table(tmp_path):
    catalog = make_catalog(tmp_path / "wh")
    return catalog.create_table(
        "db.pk", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2", **FAST_RETRY}
    )
