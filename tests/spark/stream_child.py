"""A streaming query run as its own driver process: ``db.src`` (changes, one snapshot per
micro-batch) -> ``db.sink`` through ``writeStream.format("paimon")``.

``python -m tests.spark.stream_child <warehouse> <checkpoint> [kill-after-batch]``: with the third
argument the driver SIGKILLs itself right after the commit of that batch landed in the table and
before Spark records the batch as done, the worst moment for exactly-once.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from lakestore.spark import create_spark_session
from lakestore.spark.source import PaimonDataSource
from lakestore.spark.stream import PaimonStreamWriter


def main() -> None:
    warehouse, checkpoint = sys.argv[1], sys.argv[2]
    kill_after = int(sys.argv[3]) if len(sys.argv) > 3 else None
    pid_file = f"{checkpoint}.pids"

    class KillingWriter(PaimonStreamWriter):
        def commit(self, messages, batchId):  # noqa: N803 - Spark's name
            super().commit(messages, batchId)
            if batchId == kill_after:
                # Spark runs this commit in a Python worker of the driver: kill the driver's JVM
                # first (so it cannot log the batch as done), then the Python driver.
                for pid in Path(pid_file).read_text().split():
                    os.kill(int(pid), signal.SIGKILL)

    class KillingSource(PaimonDataSource):
        @classmethod
        def name(cls) -> str:
            return "paimon-killing"

        def streamWriter(self, schema, overwrite):  # noqa: N802 - Spark's name
            return KillingWriter(self.options, overwrite)

    spark = create_spark_session(
        "local[2]", app_name="stream-child", conf={"spark.sql.shuffle.partitions": "2", "spark.driver.memory": "1g"}
    )
    spark.sparkContext.setLogLevel("ERROR")
    jvm_pid = spark.sparkContext._jvm.ProcessHandle.current().pid()  # noqa: SLF001
    Path(pid_file).write_text(f"{jvm_pid} {os.getpid()}")
    spark.dataSource.register(KillingSource)
    source = (
        spark.readStream.format("paimon")
        .option("warehouse", warehouse)
        .option("read.changelog", "true")
        .option("snapshot-id", "1")
        .option("max-snapshots-per-trigger", "1")
        .load("db.src")
    )
    query = (
        source.writeStream.format("paimon-killing")
        .option("warehouse", warehouse)
        .option("commit-user", "stream-job")
        .option("checkpointLocation", checkpoint)
        .start("db.sink")
    )
    query.processAllAvailable()
    query.stop()
    spark.stop()


if __name__ == "__main__":
    main()
