"""Fault injection for Spark tests: ``LAKESTORE_SPARK_FAULT`` in the Python workers' environment
(``lakestore.spark.tasks.maybe_fail``). Spark hands a registered data source the environment of
the moment it was registered, so the source is registered again with the fault set, and again
after."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lakestore.spark.source import PaimonDataSource
from lakestore.spark.tasks import FAULT_ENV


@contextmanager
def fault(spark, spec: str) -> Iterator[None]:
    """Jobs started inside crash as ``spec`` says (``"<point>:<marker>[:executor]"``)."""
    environment = spark.sparkContext.environment
    environment[FAULT_ENV] = spec
    spark.dataSource.register(PaimonDataSource)
    try:
        yield
    finally:
        del environment[FAULT_ENV]
        spark.dataSource.register(PaimonDataSource)


def crashed_files(marker: Path) -> set[str]:
    """Names of the files the crashed attempt had written (listed in its marker)."""
    assert marker.exists(), "no task attempt crashed: the test proved nothing"
    return {line for line in marker.read_text().splitlines() if line}


def files_of_every_snapshot(table) -> set[str]:
    """Names of the data files any retained snapshot references."""
    out: set[str] = set()
    for snapshot in table.snapshots():
        for split in table.plan(snapshot_id=snapshot.id):
            out.update(f.file_name for f in split.files)
    return out


def data_file_names(table_path: str) -> set[str]:
    return {f for _d, _dirs, files in os.walk(table_path) for f in files if f.startswith("data-")}
