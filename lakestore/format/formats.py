"""The data-file formats lakestore reads and writes, by name (``file.format``) and by file name
(Paimon's ``formatIdentifier``: each file's format from its extension, whatever the table's
current ``file.format`` says)."""

from __future__ import annotations

from lakestore.errors import UnsupportedTableError
from lakestore.format.avro import AVRO
from lakestore.format.file_format import FileFormat, format_identifier
from lakestore.format.orc import ORC
from lakestore.format.parquet import PARQUET

FORMATS: dict[str, FileFormat] = {f.name: f for f in (PARQUET, ORC, AVRO)}
# Formats Paimon writes that lakestore does not implement, and why.
UNIMPLEMENTED = {
    "csv": "csv data files are not implemented",
    "json": "json data files are not implemented",
    "lance": "lance data files are not implemented",
    "blob": "blob files are not implemented",
}


def format_named(name: str) -> FileFormat:
    """The format ``file.format`` names. Raises ``UnsupportedTableError`` for one lakestore lacks."""
    fmt = FORMATS.get(name.strip().lower())
    if fmt is None:
        reason = UNIMPLEMENTED.get(name.strip().lower(), f"{name} data files are not implemented")
        raise UnsupportedTableError(f"file.format={name}: {reason}", options=("file.format",))
    return fmt


def format_of_file(file_name: str) -> FileFormat:
    """The format of an existing data file, from its name. Raises ``UnsupportedTableError`` for
    a format lakestore does not read."""
    return format_named(format_identifier(file_name))
