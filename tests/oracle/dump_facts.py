#!/usr/bin/env python
"""Generate tests/fixtures/oracle_facts.json: ground truth produced by the oracles.

Run with the ORACLE venv (pypaimon==2.1.0, pypaimon-rust==0.4.0):
    .venv-oracle/bin/python tests/oracle/dump_facts.py [--out tests/fixtures/oracle_facts.json]

Contents
  binary_rows     pypaimon GenericRowSerializer.to_bytes (4-byte arity + BinaryRow), hex
  buckets         for real tables written by pypaimon (python writer) and by pypaimon-rust
                  (direct write+commit): which bucket every key landed in, taken from the
                  manifest entries (_BUCKET) joined with the rows of each data file; plus the
                  bucket-N directory of each file.
  partition_paths for real tables: partition value -> relative directory of its data files
                  (python and rust writers).
Values are JSON encoded: DECIMAL as string, DATE as ISO date, TIMESTAMP as ISO datetime
(naive = wall clock; LTZ values are UTC instants), BYTES as hex.
"""

import argparse
import datetime as dt
import decimal
import json
import os
import sys
import tempfile

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
from pypaimon import CatalogFactory, Schema
from pypaimon.schema.data_types import AtomicType, DataField
from pypaimon.table.row.generic_row import GenericRow, GenericRowSerializer
from pypaimon.table.row.row_kind import RowKind
from pypaimon.write.row_key_extractor import RowKeyExtractor, _bucket_from_hash

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def enc(v):
    if isinstance(v, decimal.Decimal):
        return {"decimal": str(v)}
    if isinstance(v, dt.datetime):
        return {"timestamp": v.isoformat()}
    if isinstance(v, dt.date):
        return {"date": v.isoformat()}
    if isinstance(v, (bytes, bytearray)):
        return {"bytes": bytes(v).hex()}
    if isinstance(v, float):
        return {"float": repr(v)}
    return v


# ---------------------------------------------------------------------------
# BinaryRow

UTC = dt.UTC
SINGLE = [
    ("BOOLEAN", [True, False]),
    ("TINYINT", [0, 1, -1, 127, -128]),
    ("SMALLINT", [0, 300, -300, 32767, -32768]),
    ("INT", [0, 1, -1, 123456, 2147483647, -2147483648]),
    ("BIGINT", [0, 1, -1, 2**40 + 7, 9223372036854775807, -9223372036854775808]),
    ("FLOAT", [0.0, 1.5, -2.25, 3.4028234663852886e38]),
    ("DOUBLE", [0.0, 1.5, -2.25, 1e300, 0.1]),
    ("DECIMAL(10, 2)", [decimal.Decimal("0.00"), decimal.Decimal("123.45"), decimal.Decimal("-123.45"), decimal.Decimal("99999999.99")]),
    (
        "DECIMAL(38, 10)",
        [
            decimal.Decimal("0.0000000000"),
            decimal.Decimal("123.4500000000"),
            decimal.Decimal("-123.4500000000"),
            decimal.Decimal("9999999999999999999999999999.9999999999"),
        ],
    ),
    ("STRING", ["", "a", "abcdefg", "abcdefgh", "hello world", "2024-01-01", "héllo", "日本語テキスト", "x" * 100]),
    ("BYTES", [b"", b"\x00\x01\x02", b"1234567", b"12345678", bytes(range(40))]),
    ("DATE", [dt.date(1970, 1, 1), dt.date(2024, 1, 1), dt.date(1969, 12, 31)]),
    ("TIMESTAMP(3)", [dt.datetime(1970, 1, 1), dt.datetime(2024, 1, 1, 12, 30, 45, 123000), dt.datetime(1969, 12, 31, 23, 59, 59, 999000)]),
    ("TIMESTAMP(6)", [dt.datetime(1970, 1, 1), dt.datetime(2024, 1, 1, 12, 30, 45, 123456), dt.datetime(1969, 12, 31, 23, 59, 59, 999999)]),
    ("TIMESTAMP(6) WITH LOCAL TIME ZONE", [dt.datetime(2024, 1, 1, 12, 30, 45, 123456, tzinfo=UTC), dt.datetime(1970, 1, 1, tzinfo=UTC)]),
]

MULTI = [
    (["STRING", "BIGINT"], ["2024-01-01", 42]),
    (["INT", "STRING", "DOUBLE"], [7, "a much longer string value", 2.5]),
    (["STRING", "STRING"], ["short", "this one is long"]),
    (["INT", "STRING"], [None, "abc"]),
    (["INT", "STRING", "BIGINT"], [1, None, None]),
    (
        ["STRING", "DECIMAL(38, 10)", "TIMESTAMP(6)"],
        ["key-longer-than-7", decimal.Decimal("-1.5000000000"), dt.datetime(2024, 5, 6, 7, 8, 9, 10)],
    ),
    (["BIGINT"], [None]),
    (["STRING"], [None]),
    ([], []),
    (["INT"] * 70, list(range(69)) + [None]),  # > 56 fields: 16-byte null bitset
]


def binary_row(types, values):
    fields = [DataField(i, f"f{i}", AtomicType(t)) for i, t in enumerate(types)]
    return GenericRowSerializer.to_bytes(GenericRow(list(values), fields, RowKind.INSERT))


def dump_binary_rows():
    out = []
    for t, vals in SINGLE:
        for v in vals:
            out.append({"types": [t], "values": [enc(v)], "hex": binary_row([t], [v]).hex()})
        out.append({"types": [t], "values": [None], "hex": binary_row([t], [None]).hex()})
    for types, vals in MULTI:
        out.append({"types": types, "values": [enc(v) for v in vals], "hex": binary_row(types, vals).hex()})
    return out


# ---------------------------------------------------------------------------
# real writes


def _write_table(warehouse, ident, data, pks, parts, options, route):
    cat = CatalogFactory.create({"warehouse": warehouse})
    cat.create_database(ident.split(".")[0], True)
    pkset = set(pks)
    schema_pa = pa.schema([f.with_nullable(False) if f.name in pkset else f for f in data.schema])
    cat.create_table(
        ident, Schema.from_pyarrow_schema(schema_pa, partition_keys=parts or None, primary_keys=pks or None, options=dict(options)), False
    )
    table = cat.get_table(ident)
    data = data.cast(schema_pa)
    if route == "python":
        wb = table.new_batch_write_builder()
        w = wb.new_write()
        c = wb.new_commit()
        w.write_arrow(data)
        c.commit(w.prepare_commit())
        w.close()
        c.close()
    else:
        from pypaimon_rust.datafusion import PaimonCatalog

        db, name = ident.split(".")
        rt = PaimonCatalog({"warehouse": warehouse}).get_table((db, name))
        wb = rt.new_batch_write_builder()
        w = wb.new_write()
        for b in data.to_batches():
            w.write_arrow(b)
        msgs = w.prepare_commit()
        w.close()
        c = wb.new_commit()
        c.commit(msgs)
        c.close()
    return table.table_path


def _entries(table_path):
    snaps = [int(n.split("-")[1]) for n in os.listdir(os.path.join(table_path, "snapshot")) if n.startswith("snapshot-")]
    with open(os.path.join(table_path, "snapshot", f"snapshot-{max(snaps)}")) as f:
        snap = json.load(f)
    out = []
    mdir = os.path.join(table_path, "manifest")
    for key in ("baseManifestList", "deltaManifestList"):
        with open(os.path.join(mdir, snap[key]), "rb") as fh:
            metas = list(fastavro.reader(fh))
        for m in metas:
            with open(os.path.join(mdir, m["_FILE_NAME"]), "rb") as fh:
                out.extend(fastavro.reader(fh))
    return out


def _file_index(table_path):
    """data file name -> relative directory (partition path + bucket dir)."""
    idx = {}
    for root, _dirs, files in os.walk(table_path):
        for fn in files:
            if fn.startswith("data-"):
                idx[fn] = os.path.relpath(root, table_path)
    return idx


def _rows_by_bucket(table_path, key_cols):
    """[(bucket, bucket_dir, partition_dir, row values for key_cols)] from real files."""
    idx = _file_index(table_path)
    res = []
    for e in _entries(table_path):
        if e["_KIND"] != 0:
            continue
        fname = e["_FILE"]["_FILE_NAME"]
        rel = idx[fname]
        t = pq.ParquetFile(os.path.join(table_path, rel, fname)).read()
        cols = []
        for k in key_cols:
            cols.append(t.column(k if k in t.column_names else "_KEY_" + k).to_pylist())
        for i in range(t.num_rows):
            res.append((e["_BUCKET"], rel, tuple(c[i] for c in cols)))
    return res


BIG = [2**31 - 1, 2**31, 2**32 + 5, 2**40 + 7, 9223372036854775807, -9223372036854775808, 1234567890123]
STRINGS = [
    "a",
    "b",
    "hello world",
    "abcdefg",
    "abcdefgh",
    "this is a long string key",
    "x" * 50,
    "héllo",
    "日本語",
    "emoji 😀",
    "",
    " ",
    "A",
    "key-0001",
    "key-0002",
    "key-0003",
    "2024-01-01",
]


def _bucket_case(name, data, pks, parts, bucket_keys, nbuckets, route, tmp, extra_opts=None):
    wh = os.path.join(tmp, f"{name}-{route}")
    opts = {"bucket": str(nbuckets)}
    opts.update(extra_opts or {})
    tp = _write_table(wh, "db.t", data, pks, parts, opts, route)
    rows = _rows_by_bucket(tp, bucket_keys)
    # cross-check with pypaimon's bucket function
    fields = [DataField(i, k, AtomicType(_ptype(data.schema.field(k).type))) for i, k in enumerate(bucket_keys)]
    mism = 0
    records = []
    for b, rel, key in rows:
        computed = _bucket_from_hash(RowKeyExtractor._binary_row_hash_code(key, fields), nbuckets)
        mism += computed != b
        assert rel.endswith(f"bucket-{b}"), (rel, b)
        records.append({"key": [enc(k) for k in key], "bucket": b})
    records.sort(key=lambda r: json.dumps(r["key"], sort_keys=True))
    return {
        "name": name,
        "route": route,
        "num_buckets": nbuckets,
        "primary_keys": pks,
        "partition_keys": parts,
        "bucket_key": bucket_keys,
        "bucket_key_types": [_ptype(data.schema.field(k).type) for k in bucket_keys],
        "options": opts,
        "function_mismatches": mism,
        "rows": records,
    }


def _ptype(t):
    if pa.types.is_int64(t):
        return "BIGINT"
    if pa.types.is_int32(t):
        return "INT"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "STRING"
    raise ValueError(t)


def dump_buckets(tmp):
    cases = []
    ids = list(range(200)) + [-1, -2, -7, -100, -12345] + BIG
    for route in ("python", "rust"):
        for nb in (4, 3, 7):
            data = pa.table(
                {
                    "dt": pa.array(["2024-01-01"] * len(ids)),
                    "id": pa.array(ids, pa.int64()),
                    "v": pa.array([float(i) for i in range(len(ids))]),
                }
            )
            cases.append(_bucket_case(f"pk_dt_id_bigint_b{nb}", data, ["dt", "id"], ["dt"], ["id"], nb, route, tmp))
        # STRING key
        data = pa.table({"k": pa.array(STRINGS), "v": pa.array(range(len(STRINGS)), pa.int64())})
        cases.append(_bucket_case("pk_string_b4", data, ["k"], [], ["k"], 4, route, tmp))
        # INT key
        iv = list(range(-20, 100)) + [2**31 - 1, -(2**31)]
        data = pa.table({"k": pa.array(iv, pa.int32()), "v": pa.array(range(len(iv)), pa.int64())})
        cases.append(_bucket_case("pk_int_b4", data, ["k"], [], ["k"], 4, route, tmp))
        # composite (INT, STRING) key
        comp_i = [i % 13 for i in range(60)]
        comp_s = [STRINGS[i % len(STRINGS)] + str(i // 13) for i in range(60)]
        data = pa.table({"a": pa.array(comp_i, pa.int32()), "b": pa.array(comp_s), "v": pa.array(range(60), pa.int64())})
        cases.append(_bucket_case("pk_int_string_b5", data, ["a", "b"], [], ["a", "b"], 5, route, tmp))
        # append table with bucket-key
        data = pa.table({"k": pa.array(list(range(50)), pa.int64()), "s": pa.array(["x"] * 50)})
        cases.append(_bucket_case("append_bucket_key_b4", data, [], [], ["k"], 4, route, tmp, {"bucket-key": "k"}))
    return cases


PART_STRINGS = [
    "plain",
    "with space",
    "a/b",
    "c:d",
    "k=v",
    "50%",
    "héllo",
    "日本",
    "#hash",
    "q?x",
    "star*",
    "quote'\"",
    "back\\slash",
    "brace{}",
    "[br]",
    "^caret",
    "tab\tx",
    "pipe|x",
    "<lt>",
    "plus+x",
    "comma,x",
    "semi;x",
    "at@x",
    "tilde~",
    "dollar$",
    "amp&",
    "",
    None,
]


def _partition_case(name, data, part, route, tmp):
    wh = os.path.join(tmp, f"part-{name}-{route}")
    tp = _write_table(wh, "db.t", data, [], [part], {"bucket": "-1"}, route)
    idx = _file_index(tp)
    out = []
    for e in _entries(tp):
        fname = e["_FILE"]["_FILE_NAME"]
        rel = idx[fname]
        t = pq.ParquetFile(os.path.join(tp, rel, fname)).read()
        rids = t.column("rid").to_pylist()
        for r in rids:
            val = data.column(part)[r].as_py()
            out.append({"value": enc(val), "path": os.path.dirname(rel), "partition_binary_row": e["_PARTITION"].hex()})
    out.sort(key=lambda x: json.dumps(x["value"], sort_keys=True))
    return {"name": name, "route": route, "partition_key": part, "type": str(data.schema.field(part).type), "rows": out}


def dump_partitions(tmp):
    cases = []
    for route in ("python", "rust"):
        data = pa.table({"p": pa.array(PART_STRINGS, pa.string()), "rid": pa.array(range(len(PART_STRINGS)), pa.int64())})
        try:
            cases.append(_partition_case("string", data, "p", route, tmp))
        except Exception as e:  # noqa: BLE001
            cases.append({"name": "string", "route": route, "error": repr(e)})
        ints = [0, 1, -5, 2024, None]
        data = pa.table({"p": pa.array(ints, pa.int32()), "rid": pa.array(range(len(ints)), pa.int64())})
        cases.append(_partition_case("int", data, "p", route, tmp))
        dates = [dt.date(2024, 1, 1), dt.date(1970, 1, 1), dt.date(1969, 12, 31), None]
        data = pa.table({"p": pa.array(dates, pa.date32()), "rid": pa.array(range(len(dates)), pa.int64())})
        cases.append(_partition_case("date", data, "p", route, tmp))
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "fixtures", "oracle_facts.json"))
    args = ap.parse_args()
    from importlib.metadata import version

    facts = {
        "generator": "tests/oracle/dump_facts.py",
        "pypaimon": version("pypaimon"),
        "pypaimon_rust": version("pypaimon-rust"),
        "pyarrow": pa.__version__,
        "notes": [
            "binary_rows hex includes the 4-byte big-endian arity prefix",
            "bucket rows come from real written tables: manifest _BUCKET joined "
            "with rows of each data file; route python = pypaimon writer+commit, "
            "rust = pypaimon_rust.datafusion writer+commit",
            "function_mismatches = rows where pypaimon's bucket function disagrees with where the row really landed",
        ],
    }
    facts["binary_rows"] = dump_binary_rows()
    with tempfile.TemporaryDirectory(prefix="oracle-facts-") as tmp:
        facts["buckets"] = dump_buckets(tmp)
        facts["partition_paths"] = dump_partitions(tmp)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(facts, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    print(
        json.dumps(
            {
                "out": args.out,
                "binary_rows": len(facts["binary_rows"]),
                "bucket_cases": len(facts["buckets"]),
                "partition_cases": len(facts["partition_paths"]),
            }
        )
    )


if __name__ == "__main__":
    sys.exit(main())
