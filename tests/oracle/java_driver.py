"""Drive Apache Paimon's Java core from the tests: 2.0.0 (the reference), 1.4.2 (the last 1.x)
and 0.9 (legacy, tests/oracle/java09_driver.py).

2.0.0 and 1.4.2 run tests/oracle/java/PaimonOracle.java, compiled against each version's jar by
scripts/install_jars.sh (``.jars/``, git-ignored). One JVM per version per test session, started
on first use and stopped at exit. Each request is one JSON line on the JVM's stdin, each answer
one line on its stdout after ``RESPONSE_PREFIX``. Rows cross as JSON lists, typed by the
column's Paimon type (the encoding is documented in PaimonOracle.java); this module converts
them to and from Arrow with its own parser of Paimon's type strings (it imports neither
lakestore nor pypaimon). Java reads every column as its table declares it (``NOT NULL`` columns
come back non-nullable).

    from tests.oracle.java_driver import java_oracle
    java = java_oracle()                     # 2.0.0; skips (or fails under LAKESTORE_REQUIRE_ALL=1)
    java.create_table(wh, "db.t", schema, primary_keys=["id"], options={"bucket": "2"})
    java.write(wh, "db.t", data)
    rows = java.read(wh, "db.t", options={"scan.snapshot-id": "1"})
    java_oracle("1.4.2"), java_oracle("0.9")  # the same methods
"""

from __future__ import annotations

import atexit
import base64
import decimal
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.oracle.java09_driver import JavaOracle09, java09_oracle

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
JARS = REPO_ROOT / ".jars"
SOURCES = HERE / "java"
RESPONSE_PREFIX = "@@java-oracle@@ "
DEFAULT_VERSION = "2.0.0"
VERSIONS = ("2.0.0", "1.4.2", "0.9")
JVM_ARGS = ["--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "-XX:+UseSerialGC"]


class JavaOracleError(RuntimeError):
    """Paimon Java raised; the message carries its exception and stack trace."""


def _classpath(version: str) -> str:
    return os.pathsep.join([str(JARS / f"oracle-{version}"), str(JARS / f"paimon-{version}" / "*"), str(JARS / "lib" / "*")])


def _sources_digest() -> str:
    # as scripts/install_jars.sh stamps them: sha1 of the sources concatenated in name order
    digest = hashlib.sha1()
    for path in sorted(SOURCES.glob("*.java"), key=lambda p: p.name):
        digest.update(path.read_bytes())
    return digest.hexdigest()


_compile_lock = threading.Lock()


def _ensure_compiled(version: str) -> None:
    """Recompile (scripts/install_jars.sh) when the oracle's sources changed since its build."""
    stamp = JARS / f"oracle-{version}" / ".sources"
    with _compile_lock:
        current = stamp.read_text().strip() if stamp.exists() else None
        if current != _sources_digest() and shutil.which("javac"):
            subprocess.run(["bash", str(REPO_ROOT / "scripts" / "install_jars.sh")], cwd=REPO_ROOT, check=False, capture_output=True)


def java_unavailable_reason(version: str = DEFAULT_VERSION) -> str | None:
    if version == "0.9":
        from tests.oracle.java09_driver import java_unavailable_reason as reason09

        return reason09()
    if version not in VERSIONS:
        raise ValueError(f"unknown Paimon version {version!r}; one of {VERSIONS}")
    if shutil.which("java") is None:
        return "java is not on PATH"
    if not list((JARS / f"paimon-{version}").glob("*.jar")) or not (JARS / "lib").is_dir():
        return f"Paimon {version}'s jars are missing (.jars/); run scripts/install_jars.sh"
    _ensure_compiled(version)
    if not (JARS / f"oracle-{version}" / "PaimonOracle.class").exists():
        return f"the Paimon {version} oracle is not compiled (.jars/oracle-{version}); run scripts/install_jars.sh"
    return None


class JavaOracle:
    """A running PaimonOracle JVM for one Paimon version; ``request`` is thread-safe and raises
    ``JavaOracleError``."""

    def __init__(self, version: str = DEFAULT_VERSION) -> None:
        self.version = version
        self._tmp = tempfile.mkdtemp(prefix=f"java-oracle-{version}-")
        self._stderr = open(Path(self._tmp) / "stderr.log", "wb")  # noqa: SIM115 - closed in close()
        self._proc = subprocess.Popen(
            ["java", *JVM_ARGS, f"-Djava.io.tmpdir={self._tmp}", "-cp", _classpath(version), "PaimonOracle"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
            cwd=self._tmp,
        )
        self._lock = threading.Lock()
        self._response()  # the "ready" line

    def _response(self) -> dict[str, Any]:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            if line.startswith(RESPONSE_PREFIX):
                return json.loads(line[len(RESPONSE_PREFIX) :])
        self._stderr.flush()
        tail = (Path(self._tmp) / "stderr.log").read_text(errors="replace")[-4000:]
        raise JavaOracleError(f"the Paimon {self.version} oracle exited (code {self._proc.poll()}):\n{tail}")

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        line = json.dumps({"op": op, **fields}, default=str)
        with self._lock:
            assert self._proc.stdin is not None
            self._proc.stdin.write(line + "\n")
            self._proc.stdin.flush()
            result = self._response()
        if not result.pop("ok"):
            raise JavaOracleError(f"Paimon {self.version} {op}: {result['error']}\n{result.get('traceback', '')}")
        return result

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        self._stderr.close()
        shutil.rmtree(self._tmp, ignore_errors=True)

    # -- operations ---------------------------------------------------------------------------
    def create_table(
        self,
        warehouse: Any,
        identifier: str,
        schema: pa.Schema,
        *,
        primary_keys: Sequence[str] = (),
        partition_keys: Sequence[str] = (),
        options: Mapping[str, str] | None = None,
    ) -> None:
        self.request(
            "create_table",
            warehouse=str(warehouse),
            identifier=identifier,
            fields=[{"name": f.name, "type": paimon_type(f.type, nullable=f.nullable)} for f in schema],
            primary_keys=list(primary_keys),
            partition_keys=list(partition_keys),
            table_options={k: str(v) for k, v in (options or {}).items()},
        )

    def write(
        self,
        warehouse: Any,
        identifier: str,
        data: pa.Table,
        *,
        overwrite: Mapping[str, str] | None = None,
        assigners: int = 1,
        commit_user: str | None = None,
        commit_identifier: int | None = None,
        write_columns: Sequence[str] | None = None,
        first_row_id: int | None = None,
    ) -> int | None:
        """One batch commit; ``overwrite``: {} for the whole table, or a partition. Dynamic-bucket
        tables: ``assigners`` bucket assigners, as a parallel Paimon job runs them. With
        ``commit_user`` and ``commit_identifier``: a streaming commit (StreamWriteBuilder), skipped
        by Paimon when that user already committed that identifier. Data-evolution tables:
        ``write_columns`` writes only those columns (``withWriteType``) and ``first_row_id`` gives
        the new files that ``_FIRST_ROW_ID``, so they update the rows of that row-id range."""
        columns, rows = encode_table(data)
        result = self.request(
            "write",
            warehouse=str(warehouse),
            identifier=identifier,
            columns=columns,
            rows=rows,
            overwrite=None if overwrite is None else {k: str(v) for k, v in overwrite.items()},
            assigners=assigners,
            commit_user=commit_user,
            commit_identifier=commit_identifier,
            write_columns=list(write_columns) if write_columns is not None else None,
            first_row_id=first_row_id,
        )
        return result["snapshot_id"]

    def compact(self, warehouse: Any, identifier: str) -> int | None:
        """A full compaction of every bucket, committed by Paimon Java."""
        return self.request("compact", warehouse=str(warehouse), identifier=identifier)["snapshot_id"]

    def read(
        self, warehouse: Any, identifier: str, *, options: Mapping[str, Any] | None = None, projection: Iterable[str] | None = None
    ) -> pa.Table:
        """Rows as Paimon Java reads them; ``options`` are dynamic options such as
        ``scan.snapshot-id``, ``scan.tag-name`` or ``incremental-between``."""
        result = self.request(
            "read",
            warehouse=str(warehouse),
            identifier=identifier,
            options={k: str(v) for k, v in (options or {}).items()},
            projection=list(projection) if projection is not None else None,
        )
        return decode_table(result["fields"], result["rows"])

    def changes(self, warehouse: Any, identifier: str, start: int, end: int) -> pa.Table:
        """Snapshots ``start+1..end`` of the table's ``$audit_log`` (a ``rowkind`` column)."""
        return self.read(warehouse, f"{identifier}$audit_log", options={"incremental-between": f"{start},{end}"})

    def snapshots(self, warehouse: Any, identifier: str) -> list[dict[str, Any]]:
        """id, commit_kind, schema_id, commit_user, commit_identifier of each snapshot."""
        return self.request("snapshots", warehouse=str(warehouse), identifier=identifier)["snapshots"]

    def snapshot_json(self, warehouse: Any, identifier: str, snapshot_id: int) -> str:
        """The text of snapshot file ``snapshot_id`` as Paimon reads it off disk."""
        return self.request("snapshot_json", warehouse=str(warehouse), identifier=identifier, snapshot_id=snapshot_id)["json"]

    def create_tag(self, warehouse: Any, identifier: str, tag: str, snapshot_id: int | None = None) -> None:
        self.request("create_tag", warehouse=str(warehouse), identifier=identifier, tag=tag, snapshot_id=snapshot_id)

    def delete_tag(self, warehouse: Any, identifier: str, tag: str) -> None:
        self.request("delete_tag", warehouse=str(warehouse), identifier=identifier, tag=tag)

    def rollback(self, warehouse: Any, identifier: str, *, snapshot_id: int | None = None, tag: str | None = None) -> None:
        self.request("rollback", warehouse=str(warehouse), identifier=identifier, snapshot_id=snapshot_id, tag=tag)

    def expire(self, warehouse: Any, identifier: str, *, retain_min: int, retain_max: int | None = None) -> int:
        return self.request("expire", warehouse=str(warehouse), identifier=identifier, retain_min=retain_min, retain_max=retain_max)[
            "expired"
        ]

    def alter(self, warehouse: Any, identifier: str, changes: list[dict[str, Any]]) -> None:
        """``changes``: {"op": "add_column", "name", "type": "INT"|"DOUBLE"|"STRING"...| a pa.DataType},
        {"op": "drop_column", "name"}, {"op": "rename_column", "name", "new_name"},
        {"op": "update_column_type", "name", "type"}, {"op": "set_option", "key", "value"},
        {"op": "remove_option", "key"}."""
        encoded = [
            {**change, "type": paimon_type(change["type"]) if isinstance(change.get("type"), pa.DataType) else change["type"]}
            if "type" in change
            else change
            for change in changes
        ]
        self.request("alter", warehouse=str(warehouse), identifier=identifier, changes=encoded)

    def create_branch(self, warehouse: Any, identifier: str, branch: str, *, tag: str | None = None) -> None:
        self.request("create_branch", warehouse=str(warehouse), identifier=identifier, branch=branch, tag=tag)

    def use_catalog(self, warehouse: Any, options: Mapping[str, str]) -> None:
        """Open ``warehouse`` with these catalog options from now on (e.g. ``metastore=jdbc``,
        ``uri``, ``jdbc.user``); ``{}`` goes back to the filesystem catalog."""
        self.request("use_catalog", warehouse=str(warehouse), catalog_options={k: str(v) for k, v in options.items()})

    def catalog(self, warehouse: Any, action: str, **fields: Any) -> list[str]:
        """Catalog operations of Paimon Java: ``list_databases``, ``list_tables`` (``database=``),
        ``create_database`` (``database=``, ``properties=``), ``drop_database`` (cascade),
        ``drop_table`` / ``rename_table`` (``identifier=``, ``target=``). Returns listed names."""
        return self.request("catalog", warehouse=str(warehouse), action=action, **fields)["names"]

    def option_keys(self) -> dict[str, dict[str, Any]]:
        """Every key of Paimon's ``CoreOptions.getOptions()``: key -> {"fallback_keys", "default"}."""
        return {o["key"]: {"fallback_keys": o["fallback_keys"], "default": o["default"]} for o in self.request("option_keys")["options"]}

    def analyze(
        self, warehouse: Any, identifier: str, *, merged_record_count: int, merged_record_size: int, columns: Mapping[str, Sequence[int]]
    ) -> int:
        """Commit statistics of the latest snapshot as ANALYZE does (a new ANALYZE snapshot naming a
        ``statistics/`` file); ``columns``: BIGINT column -> [distinct, min, max, nulls]. Returns
        the new snapshot id."""
        return self.request(
            "analyze",
            warehouse=str(warehouse),
            identifier=identifier,
            merged_record_count=merged_record_count,
            merged_record_size=merged_record_size,
            columns={k: list(map(int, v)) for k, v in columns.items()},
        )["snapshot_id"]

    def dv_bitmaps(self, cases: Sequence[Sequence[int]]) -> list[bytes]:
        """``BitmapDeletionVector`` bytes (magic number, then the bitmap) of each list of positions."""
        vectors = self.request("dv_bitmaps", cases=[list(map(int, c)) for c in cases])["vectors"]
        return [base64.b64decode(v) for v in vectors]

    def file_index(
        self,
        index: str,
        type_: str,
        values: Sequence[Any],
        *,
        options: Mapping[str, str] | None = None,
        queries: Sequence[Mapping[str, Any]] = (),
    ) -> tuple[bytes, list[Any]]:
        """Java's file index ``index`` (``bitmap``, ``bsi``, ``bloom-filter``) of type ``type_`` over
        ``values`` (one per row, None for null; JSON as the oracle's writes take them: timestamps
        as epoch microseconds, decimals as strings): its bytes, and Java's reader's answer to each
        query (``{"op": "equal" | "not_equal" | "in" | "not_in" | "is_null" | "is_not_null" | "<"
        | "<=" | ">" | ">=", "literal" | "literals": ...}``): the row positions, or a bool (remain)
        when the answer is no row set."""
        result = self.request(
            "file_index", index=index, type=type_, values=list(values), options=dict(options or {}), queries=list(queries)
        )
        return base64.b64decode(result["bytes"]), result["answers"]


# -- Arrow types <-> Paimon types ---------------------------------------------------------------


def paimon_type(t: pa.DataType, *, nullable: bool = True) -> Any:
    """The Paimon type of an Arrow type in Paimon's schema-file JSON (a string when atomic)."""
    suffix = "" if nullable else " NOT NULL"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        item = t.value_field
        return {"type": "ARRAY" + suffix, "element": paimon_type(item.type, nullable=item.nullable)}
    if pa.types.is_map(t):
        return {
            "type": "MAP" + suffix,
            "key": paimon_type(t.key_field.type, nullable=False),
            "value": paimon_type(t.item_field.type, nullable=t.item_field.nullable),
        }
    if pa.types.is_struct(t):
        return {"type": "ROW" + suffix, "fields": [{"name": f.name, "type": paimon_type(f.type, nullable=f.nullable)} for f in t]}
    simple = {
        pa.bool_(): "BOOLEAN",
        pa.int8(): "TINYINT",
        pa.int16(): "SMALLINT",
        pa.int32(): "INT",
        pa.int64(): "BIGINT",
        pa.float32(): "FLOAT",
        pa.float64(): "DOUBLE",
        pa.date32(): "DATE",
        pa.string(): "STRING",
        pa.large_string(): "STRING",
        pa.binary(): "BYTES",
        pa.large_binary(): "BYTES",
    }
    if t in simple:
        return simple[t] + suffix
    if pa.types.is_fixed_size_binary(t):
        return f"BINARY({t.byte_width}){suffix}"
    if pa.types.is_decimal(t):
        return f"DECIMAL({t.precision}, {t.scale}){suffix}"
    if pa.types.is_timestamp(t):
        precision = {"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit]
        return f"TIMESTAMP({precision}){' WITH LOCAL TIME ZONE' if t.tz is not None else ''}{suffix}"
    if pa.types.is_time(t):
        return f"TIME({ {'s': 0, 'ms': 3, 'us': 6, 'ns': 9}[t.unit] }){suffix}"
    raise TypeError(f"the Java oracle driver has no Paimon type for Arrow {t}")


_TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|'(?:[^']|'')*'|[A-Za-z_][A-Za-z_0-9]*|\d+|[<>(),])")


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"cannot parse Paimon type {text!r} at {pos}")
        out.append(m.group(1))
        pos = m.end()
    return out


def arrow_type(text: str) -> tuple[pa.DataType, bool]:
    """Arrow type and nullability of a Paimon SQL type string (``DataType.asSQLString()``:
    ``BIGINT NOT NULL``, ``TIMESTAMP(6) WITH LOCAL TIME ZONE``, ``ROW<`a` INT, `b` STRING>``),
    mapped as lakestore maps them (TIMESTAMP(p<=3) ms, (p<=6) us, else ns; LTZ in UTC)."""
    tokens = _tokens(text)
    t, nullable, rest = _parse(tokens, 0)
    if rest != len(tokens):
        raise ValueError(f"cannot parse Paimon type {text!r}")
    return t, nullable


def _parse(tok: list[str], i: int) -> tuple[pa.DataType, bool, int]:
    name = tok[i].upper()
    i += 1
    params: list[int] = []
    if i < len(tok) and tok[i] == "(":
        i += 1
        while tok[i] != ")":
            if tok[i] != ",":
                params.append(int(tok[i]))
            i += 1
        i += 1
    t: pa.DataType
    if name in ("ARRAY", "MULTISET", "MAP", "ROW"):
        assert tok[i] == "<", tok
        i += 1
        if name == "ROW":
            fields = []
            while tok[i] != ">":
                if tok[i] == ",":
                    i += 1
                    continue
                field_name = tok[i][1:-1].replace("``", "`") if tok[i].startswith("`") else tok[i]
                ft, fn, i = _parse(tok, i + 1)
                if i < len(tok) and tok[i].startswith("'"):  # a field description
                    i += 1
                fields.append(pa.field(field_name, ft, nullable=fn))
            t = pa.struct(fields)
        else:
            first, first_nullable, i = _parse(tok, i)
            if name == "MAP":
                assert tok[i] == ",", tok
                value, value_nullable, i = _parse(tok, i + 1)
                t = pa.map_(pa.field("key", first, nullable=False), pa.field("value", value, nullable=value_nullable))
            elif name == "MULTISET":
                t = pa.map_(pa.field("key", first, nullable=False), pa.field("value", pa.int32(), nullable=False))
            else:
                t = pa.list_(pa.field("item", first, nullable=first_nullable))
        assert tok[i] == ">", tok
        i += 1
    elif name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        precision = params[0] if params else 6
        tz = "UTC" if name == "TIMESTAMP_LTZ" else None
        if [x.upper() for x in tok[i : i + 4]] == ["WITH", "LOCAL", "TIME", "ZONE"]:
            tz, i = "UTC", i + 4
        elif [x.upper() for x in tok[i : i + 3]] == ["WITHOUT", "TIME", "ZONE"]:
            i += 3
        t = pa.timestamp("ms" if precision <= 3 else "us" if precision <= 6 else "ns", tz=tz)
    elif name == "TIME":
        t = pa.time32("ms")
    elif name in ("DECIMAL", "NUMERIC", "DEC"):
        t = pa.decimal128(params[0] if params else 10, params[1] if len(params) > 1 else 0)
    else:
        simple = {
            "BOOLEAN": pa.bool_(),
            "TINYINT": pa.int8(),
            "SMALLINT": pa.int16(),
            "INT": pa.int32(),
            "INTEGER": pa.int32(),
            "BIGINT": pa.int64(),
            "FLOAT": pa.float32(),
            "DOUBLE": pa.float64(),
            "DATE": pa.date32(),
            "CHAR": pa.string(),
            "VARCHAR": pa.string(),
            "STRING": pa.string(),
            "BINARY": pa.binary(),
            "VARBINARY": pa.binary(),
            "BYTES": pa.binary(),
        }
        if name not in simple:
            raise ValueError(f"the Java oracle driver does not read Paimon {name} columns")
        t = simple[name]
    nullable = True
    if [x.upper() for x in tok[i : i + 2]] == ["NOT", "NULL"]:
        nullable, i = False, i + 2
    elif i < len(tok) and tok[i].upper() == "NULL":
        i += 1
    return t, nullable, i


# -- Arrow data <-> the oracle's JSON rows --------------------------------------------------------

_SCALE = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": 1}


def encode_array(arr: pa.Array) -> list[Any]:
    """An Arrow array's values in the oracle's JSON encoding (see PaimonOracle.java)."""
    t = arr.type
    if pa.types.is_timestamp(t):
        ints = arr.cast(pa.int64()).to_pylist()
        scale = _SCALE[t.unit]  # to microseconds; nanoseconds stay nanoseconds (TIMESTAMP(9))
        return [None if v is None else v * scale for v in ints]
    if pa.types.is_date32(t):
        return arr.cast(pa.int32()).to_pylist()
    if pa.types.is_time(t):
        ints = arr.cast(pa.int64() if pa.types.is_time64(t) else pa.int32()).to_pylist()
        divide = {"s": 1, "ms": 1, "us": 1_000, "ns": 1_000_000}[t.unit]
        multiply = 1000 if t.unit == "s" else 1
        return [None if v is None else v * multiply // divide for v in ints]
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return [None if v is None else base64.b64encode(v).decode() for v in arr.to_pylist()]
    if pa.types.is_decimal(t):
        return [None if v is None else str(v) for v in arr.to_pylist()]
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        offsets = arr.offsets.to_pylist()
        valid = arr.is_valid().to_pylist()
        lengths = [offsets[i + 1] - offsets[i] if valid[i] else None for i in range(len(arr))]
        if pa.types.is_map(t):
            keys, items = arr.keys, arr.items
            if len(keys) != offsets[-1] - offsets[0]:  # not sliced to this array's range
                keys, items = (a.slice(offsets[0], offsets[-1] - offsets[0]) for a in (keys, items))
            flat = [[k, v] for k, v in zip(encode_array(keys), encode_array(items), strict=True)]
        else:
            flat = encode_array(arr.flatten())
        out: list[Any] = []
        pos = 0
        for length in lengths:
            if length is None:
                out.append(None)
            else:
                out.append(flat[pos : pos + length])
                pos += length
        return out
    if pa.types.is_struct(t):
        children = [encode_array(child) for child in arr.flatten()]
        valid = arr.is_valid().to_pylist()
        return [[c[i] for c in children] if valid[i] else None for i in range(len(arr))]
    return arr.to_pylist()


def encode_table(data: pa.Table) -> tuple[list[str], list[list[Any]]]:
    data = data.combine_chunks()
    columns = [encode_array(c.chunk(0) if c.num_chunks else pa.array([], c.type)) for c in data.columns]
    return data.column_names, [list(row) for row in zip(*columns, strict=True)] if columns else []


def _decode(value: Any, t: pa.DataType) -> Any:
    """A JSON value as the Python value ``pa.array`` takes for type ``t``."""
    if value is None:
        return None
    if pa.types.is_timestamp(t):
        # micros (ns columns: nanos) -> the column's unit
        return value // 1000 if t.unit == "ms" else value
    if pa.types.is_binary(t):
        return base64.b64decode(value)
    if pa.types.is_decimal(t):
        return decimal.Decimal(value)
    if pa.types.is_floating(t):
        return float(value)
    if pa.types.is_map(t):
        return [(_decode(k, t.key_type), _decode(v, t.item_type)) for k, v in value]
    if pa.types.is_list(t):
        return [_decode(v, t.value_type) for v in value]
    if pa.types.is_struct(t):
        return {f.name: _decode(v, f.type) for f, v in zip(t, value, strict=True)}
    return value


def decode_table(fields: list[dict[str, Any]], rows: list[list[Any]]) -> pa.Table:
    arrow_fields = []
    for f in fields:
        t, nullable = arrow_type(f["type"])
        arrow_fields.append(pa.field(f["name"], t, nullable=nullable))
    schema = pa.schema(arrow_fields)
    columns = []
    for i, field in enumerate(schema):
        values = [_decode(row[i], field.type) for row in rows]
        if pa.types.is_timestamp(field.type):
            columns.append(pa.array(values, pa.int64()).cast(field.type))
        else:
            columns.append(pa.array(values, field.type))
    return pa.Table.from_arrays(columns, schema=schema)


# -- one oracle per version per session ---------------------------------------------------------

_oracles: dict[str, JavaOracle] = {}
_oracles_lock = threading.Lock()


def java_oracle(version: str = DEFAULT_VERSION) -> Any:
    """The session's oracle of Paimon ``version`` ("2.0.0", the reference; "1.4.2"; "0.9" the
    legacy pypaimon 0.2.0 bridge, a ``JavaOracle09`` with the same methods). Skips the test when
    it cannot run here, unless ``LAKESTORE_REQUIRE_ALL=1`` (CI), where it fails the test."""
    if version == "0.9":
        return java09_oracle()
    with _oracles_lock:
        if version not in _oracles:
            reason = java_unavailable_reason(version)
            if reason is not None:
                if os.environ.get("LAKESTORE_REQUIRE_ALL") == "1":
                    pytest.fail(f"LAKESTORE_REQUIRE_ALL=1 but {reason}")
                pytest.skip(reason)
            oracle = JavaOracle(version)
            atexit.register(oracle.close)
            _oracles[version] = oracle
        return _oracles[version]


__all__ = ["DEFAULT_VERSION", "VERSIONS", "JavaOracle", "JavaOracle09", "JavaOracleError", "java_oracle", "java_unavailable_reason"]
