"""lakestore-side helpers shared by workloads (tables built the same way each time)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

import lakestore
from bench import data


def create_table(warehouse: Path, name: str, options: dict[str, str] | None = None) -> lakestore.Table:
    catalog = lakestore.Catalog(str(warehouse))
    catalog.create_database("bench", exist_ok=True)
    return catalog.create_table(
        f"bench.{name}",
        schema=data.SCHEMA,
        partition_keys=list(data.PARTITION_KEYS),
        primary_keys=list(data.PRIMARY_KEYS),
        options=dict(options or data.OPTIONS),
    )


def write_commits(table: lakestore.Table, commits: list[pa.Table]) -> None:
    for c in commits:
        table.write_arrow(c)


def file_path(reader, split, f) -> str:  # type: ignore[no-untyped-def]
    """Path of a data file of a split (SplitReader.file_path's signature is still moving)."""
    try:
        return reader.file_path(split.partition_values, split.bucket, f)
    except TypeError:
        return reader.file_path(split, f)


def live_file_paths(table: lakestore.Table) -> list[str]:
    reader = table.store.split_reader()
    return [file_path(reader, split, f) for split in table.scan().plan() for f in split.files]


def runs_per_bucket(table: lakestore.Table) -> tuple[int, int]:
    counts = [len(split.files) for split in table.scan().plan()]
    return (min(counts), max(counts)) if counts else (0, 0)


def copy_table(src: Path, warehouse: Path, name: str) -> Path:
    """Copy a table directory into ``warehouse`` as bench.<name> (a catalog layout pypaimon opens)."""
    import shutil  # noqa: PLC0415

    dest = warehouse / "bench.db" / name
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dest)
    return dest
