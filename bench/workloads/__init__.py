"""One module per workload; each has NUMBER, TITLE and ``run(ctx) -> WorkloadResult``."""

from __future__ import annotations

from types import ModuleType


def all_workloads() -> list[ModuleType]:
    from bench.workloads import (  # noqa: PLC0415 - keep `import bench` cheap
        w1_pk_write,
        w2_merge_read,
        w3_compacted_read,
        w4_compaction,
        w5_commit_latency,
        w6_big_write,
        w7_spark,
        w8_deletion_vectors,
        w9_headline,
        w10_many_partitions,
    )

    return [
        w1_pk_write,
        w2_merge_read,
        w3_compacted_read,
        w4_compaction,
        w5_commit_latency,
        w6_big_write,
        w7_spark,
        w8_deletion_vectors,
        w9_headline,
        w10_many_partitions,
    ]
