"""Schema JSON of Paimon 1.1-2.0: ``defaultValue`` on fields (read, kept across schema changes,
written; writes refused since Paimon's writers fill nulls with it), VECTOR read and written as
Arrow fixed-size lists, VARIANT and BLOB refused by name as unsupported (never as corrupt).
Tables from tests/fixtures/paimon2_types were written by Paimon 2.0.0's Java core."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import CorruptMetadataError, UnsupportedTableError, UnsupportedTypeError
from lakestore.format.types import DataType, from_arrow, parse_type
from lakestore.meta.schema import TableSchema
from lakestore.meta.schema_change import RenameColumn, UpdateColumnType, UpdateComment, apply_changes

ROOT = Path(__file__).resolve().parents[2]
TYPES = ROOT / "tests" / "fixtures" / "paimon2_types"
JAVA_PROGRAM = ROOT / "tests" / "format" / "Paimon2Types.java"


def _doc(fields: list[dict], options: dict[str, str] | None = None, highest: int | None = None) -> str:
    return json.dumps(
        {
            "version": 3,
            "id": 0,
            "fields": fields,
            "highestFieldId": highest if highest is not None else max(f["id"] for f in fields),
            "partitionKeys": [],
            "primaryKeys": [],
            "options": options or {"bucket": "-1", "file.format": "parquet"},
            "timeMillis": 1,
        }
    )


def _warehouse(tmp_path: Path) -> lakestore.Catalog:
    shutil.copytree(TYPES, tmp_path / "wh")
    return lakestore.Catalog(str(tmp_path / "wh"))


# ---------------------------------------------------------------- defaultValue


def test_default_value_is_read_kept_and_written() -> None:
    text = _doc(
        [
            {"id": 0, "name": "a", "type": "INT", "defaultValue": "7"},
            {"id": 1, "name": "b", "type": "STRING", "description": "c", "defaultValue": "'x'"},
            {"id": 2, "name": "r", "type": {"type": "ROW", "fields": [{"id": 3, "name": "n", "type": "INT", "defaultValue": "1"}]}},
        ],
        highest=3,
    )
    schema = TableSchema.from_json(text, source="s")
    assert schema.default_values == {"a": "7", "b": "'x'"}
    assert schema.field("r").type.fields[0].default_value == "1"
    again = TableSchema.from_json(schema.to_json(), source="s")
    assert again == schema
    written = json.loads(schema.to_json())["fields"]
    assert written[0] == {"id": 0, "name": "a", "type": "INT", "defaultValue": "7"}
    assert written[1] == {"id": 1, "name": "b", "type": "STRING", "description": "c", "defaultValue": "'x'"}
    assert "defaultValue" in written[2]["type"]["fields"][0]
    # schema changes keep it (Paimon's SchemaManager carries it through rename, type and comment changes)
    changed = apply_changes(schema, [RenameColumn("a", "a2"), UpdateColumnType("a2", "BIGINT"), UpdateComment("doc", "b")])
    assert changed.default_values == {"a2": "7", "b": "'x'"}
    with pytest.raises(CorruptMetadataError):
        TableSchema.from_json(_doc([{"id": 0, "name": "a", "type": "INT", "defaultValue": 7}]), source="s")


def test_paimon_2_table_with_a_default_reads_as_written_and_refuses_writes(tmp_path) -> None:
    """Paimon fills a written null with the default on write; readers never apply it."""
    table = _warehouse(tmp_path).get_table("db.vec")
    assert table.schema.default_values == {"d": "7"}
    rows = table.to_arrow().sort_by("id")
    assert rows["d"].to_pylist() == [7, 5]  # Paimon's writer put 7 for the null it was given
    with pytest.raises(UnsupportedTableError, match=r"\['d'\].*default value"):
        table.write_arrow(rows.slice(0, 1))


# ---------------------------------------------------------------- VECTOR


def test_vector_type_json_and_arrow() -> None:
    doc = {"type": "VECTOR", "element": "FLOAT", "length": 3}
    t = parse_type(doc)
    assert t == DataType.vector(DataType("FLOAT"), 3)
    assert t.to_paimon() == doc and str(t) == "VECTOR<FLOAT, 3>"
    assert t.to_arrow() == pa.list_(pa.field("element", pa.float32()), 3)
    assert from_arrow(pa.list_(pa.float32(), 3)) == t
    nn = parse_type({"type": "VECTOR NOT NULL", "element": "BIGINT NOT NULL", "length": 2})
    assert not nn.nullable and nn.to_paimon() == {"type": "VECTOR NOT NULL", "element": "BIGINT NOT NULL", "length": 2}
    with pytest.raises(UnsupportedTypeError):
        parse_type({"type": "VECTOR", "element": "STRING", "length": 2})
    with pytest.raises(UnsupportedTypeError):
        from_arrow(pa.list_(pa.string(), 2))


def test_paimon_2_vector_table_reads(tmp_path) -> None:
    table = _warehouse(tmp_path).get_table("db.vec")
    rows = table.to_arrow().sort_by("id")
    assert rows.schema.field("vec").type == pa.list_(pa.field("element", pa.float32()), 3)
    assert rows["vec"].to_pylist() == [[1.0, 2.0, 3.0], None]


@pytest.mark.oracle
def test_paimon_2_reads_lakestore_vectors(tmp_path) -> None:
    if shutil.which("java") is None:
        pytest.skip("java is not installed")
    jars = ROOT / ".jars"
    if not list((jars / "paimon-2.0.0").glob("*.jar")) or not list((jars / "lib").glob("*.jar")):
        pytest.skip("Paimon 2.0.0 jars missing (bash scripts/install_jars.sh)")
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("vec", pa.list_(pa.float32(), 3))])
    table = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options={"bucket": "1"})
    assert json.loads(Path(table.path, "schema", "schema-0").read_text())["fields"][1]["type"] == {
        "type": "VECTOR",
        "element": "FLOAT",
        "length": 3,
    }
    table.write_arrow(pa.table({"id": [1, 2], "vec": [[1.0, 2.0, 3.0], None]}, schema=schema))
    done = subprocess.run(
        ["java", "-cp", f"{jars / 'paimon-2.0.0'}/*:{jars / 'lib'}/*", str(JAVA_PROGRAM), "read", str(tmp_path / "wh"), "db.t"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    lines = done.stdout.splitlines()
    assert "`vec` VECTOR<FLOAT, 3>" in lines[0]
    assert sorted(lines[1:]) == ["1 [1.0, 2.0, 3.0]", "2 null"]


# ---------------------------------------------------------------- VARIANT, BLOB


@pytest.mark.parametrize("root", ["VARIANT", "BLOB"])
def test_variant_and_blob_parse_and_round_trip(root) -> None:
    assert parse_type(root).to_paimon() == root
    assert parse_type(f"{root} NOT NULL").to_paimon() == f"{root} NOT NULL"
    with pytest.raises(UnsupportedTableError, match=root):
        parse_type(root).to_arrow()


def test_a_variant_table_is_refused_by_name(tmp_path) -> None:
    table = _warehouse(tmp_path).get_table("db.var")  # opens: the schema is not corrupt
    assert table.schema.field("var").type.root == "VARIANT"
    for action in (table.to_arrow, lambda: table.write_arrow(pa.table({"id": [1]})), table.compact):
        with pytest.raises(UnsupportedTableError, match="'var' has type VARIANT"):
            action()


def test_a_blob_column_is_refused_by_name(tmp_path) -> None:
    catalog = _warehouse(tmp_path)
    # Paimon 2.0's blob table also sets row tracking and data evolution, refused by name on
    # their own; the type alone is refused too
    with pytest.raises(UnsupportedTableError):
        catalog.get_table("db.blob").to_arrow()
    path = tmp_path / "wh" / "db.db" / "blob" / "schema" / "schema-0"
    doc = json.loads(path.read_text())
    doc["options"] = {"bucket": "-1", "file.format": "parquet"}
    path.write_text(json.dumps(doc))
    table = catalog.get_table("db.blob")
    with pytest.raises(UnsupportedTableError, match="'b' has type BLOB.*blob files"):
        table.to_arrow()
    nested = _doc([{"id": 0, "name": "a", "type": {"type": "ARRAY", "element": "VARIANT NOT NULL"}}])
    schema = TableSchema.from_json(nested, source="s")
    with pytest.raises(UnsupportedTableError, match="'a' has type VARIANT NOT NULL"):
        schema.require_supported("read", table="t")
    schema.require_supported("expire snapshots of", table="t")  # maintenance does not touch values
