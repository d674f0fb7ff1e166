"""How a table's rows are assigned to buckets: Paimon's ``BucketMode``, derived once from the
primary key, the partition keys and the ``bucket`` option (``FileStoreTable.bucketMode``).

=================  ===========================================  ====================================
mode               table                                        a row's bucket
=================  ===========================================  ====================================
``HASH_FIXED``     ``bucket`` = N > 0                           hash of the bucket key, mod N
``HASH_DYNAMIC``   primary key, ``bucket`` = -1, the key        chosen by the writer, remembered in
                   holds every partition key                    the bucket's ``HASH`` index
``KEY_DYNAMIC``    primary key, ``bucket`` = -1, the key        as ``HASH_DYNAMIC``, a key moving
                   lacks a partition key (cross-partition)      between partitions (cross-partition upsert)
``BUCKET_UNAWARE`` no primary key, ``bucket`` = -1              none: bucket 0, files compacted by size
``POSTPONE_MODE``  primary key, ``bucket`` = -2                 written to bucket -2, given a real
                                                                bucket by compaction
=================  ===========================================  ====================================
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from lakestore.meta.paths import POSTPONE_BUCKET

# the ``bucket`` value of dynamic-bucket and bucket-unaware tables (Paimon's default)
DYNAMIC_BUCKET = -1


class BucketMode(enum.Enum):
    HASH_FIXED = "HASH_FIXED"
    HASH_DYNAMIC = "HASH_DYNAMIC"
    KEY_DYNAMIC = "KEY_DYNAMIC"
    BUCKET_UNAWARE = "BUCKET_UNAWARE"
    POSTPONE_MODE = "POSTPONE_MODE"

    @classmethod
    def of(cls, *, primary_keys: Sequence[str], partition_keys: Sequence[str], bucket: int) -> BucketMode:
        if not primary_keys:
            return cls.BUCKET_UNAWARE if bucket == DYNAMIC_BUCKET else cls.HASH_FIXED
        if bucket == POSTPONE_BUCKET:
            return cls.POSTPONE_MODE
        if bucket == DYNAMIC_BUCKET:
            return cls.HASH_DYNAMIC if set(partition_keys) <= set(primary_keys) else cls.KEY_DYNAMIC
        return cls.HASH_FIXED

    @property
    def dynamic(self) -> bool:
        """The writer chooses a key's bucket (``HASH_DYNAMIC``, ``KEY_DYNAMIC``)."""
        return self in (BucketMode.HASH_DYNAMIC, BucketMode.KEY_DYNAMIC)

    @property
    def key_determines_bucket(self) -> bool:
        """A row's bucket is a function of its bucket key (``HASH_FIXED`` only): bucket pruning
        and bucket-local joins rely on it."""
        return self is BucketMode.HASH_FIXED
