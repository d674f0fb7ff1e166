"""BucketMode: derived once from the keys and the ``bucket`` option, as Paimon's
``FileStoreTable.bucketMode`` derives it."""

from __future__ import annotations

import pyarrow as pa
import pytest

from lakestore.meta.bucket_mode import BucketMode
from lakestore.meta.schema import new_schema

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("k", pa.int64(), nullable=False), pa.field("v", pa.int64())])


@pytest.mark.parametrize(
    ("primary_keys", "partition_keys", "options", "mode"),
    [
        ([], [], {}, BucketMode.BUCKET_UNAWARE),
        ([], ["dt"], {"bucket": "4", "bucket-key": "k"}, BucketMode.HASH_FIXED),
        (["dt", "k"], ["dt"], {"bucket": "4"}, BucketMode.HASH_FIXED),
        (["dt", "k"], ["dt"], {}, BucketMode.HASH_DYNAMIC),
        (["k"], [], {"bucket": "-1"}, BucketMode.HASH_DYNAMIC),
        (["k"], ["dt"], {}, BucketMode.KEY_DYNAMIC),
        (["dt", "k"], ["dt"], {"bucket": "-2"}, BucketMode.POSTPONE_MODE),
    ],
)
def test_bucket_mode_of_a_schema(primary_keys, partition_keys, options, mode):
    schema = new_schema(SCHEMA, primary_keys=primary_keys, partition_keys=partition_keys, options=options)
    assert schema.bucket_mode is mode
    assert schema.bucket_mode.dynamic == (mode in (BucketMode.HASH_DYNAMIC, BucketMode.KEY_DYNAMIC))
    assert schema.bucket_mode.key_determines_bucket == (mode is BucketMode.HASH_FIXED)
