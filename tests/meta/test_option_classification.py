"""Every key of Paimon's ``CoreOptions`` is classified in lakestore (lakestore/meta/option_keys.py):
implemented, ignored as a runtime setting, or refused by name. The keys come from Paimon's own
jars (tests/oracle/java/CoreOptionKeys.java, a single-file Java program); without java or the jars
(scripts/install_jars.sh) the test skips, unless LAKESTORE_REQUIRE_ALL=1."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest

from lakestore.errors import UnsupportedTableError
from lakestore.meta import option_keys
from lakestore.meta import options as opts
from lakestore.units import parse_duration_ms, parse_memory

REPO = Path(__file__).resolve().parents[2]
PROGRAM = REPO / "tests" / "oracle" / "java" / "CoreOptionKeys.java"
VERSIONS = ("2.0.0", "1.4.2")


def _unavailable(version: str) -> str | None:
    if shutil.which("java") is None:
        return "java is not on PATH"
    if not list((REPO / ".jars" / f"paimon-{version}").glob("*.jar")) or not (REPO / ".jars" / "lib").is_dir():
        return f"Paimon {version}'s jars are missing (.jars/); run scripts/install_jars.sh"
    return None


@cache
def paimon_option_keys(version: str) -> dict[str, tuple[str, str]]:
    """key -> (the key it is a fallback of, or "", default) of Paimon ``version``'s CoreOptions."""
    reason = _unavailable(version)
    if reason is not None:
        if os.environ.get("LAKESTORE_REQUIRE_ALL") == "1":
            pytest.fail(f"LAKESTORE_REQUIRE_ALL=1 but {reason}")
        pytest.skip(reason)
    classpath = os.pathsep.join([str(REPO / ".jars" / f"paimon-{version}" / "*"), str(REPO / ".jars" / "lib" / "*")])
    done = subprocess.run(["java", "-cp", classpath, str(PROGRAM)], capture_output=True, text=True, timeout=300, check=True)
    keys: dict[str, tuple[str, str]] = {}
    for line in done.stdout.splitlines():
        key, fallback_of, default = (line.split("\t") + ["", ""])[:3]
        keys.setdefault(key, (fallback_of, default))
    assert len(keys) > 250, done.stdout[:2000]
    return keys


@pytest.mark.parametrize("version", VERSIONS)
def test_every_paimon_core_option_is_classified(version):
    keys = paimon_option_keys(version)
    unclassified = sorted(k for k in keys if opts.classify(k) == "unknown")
    assert not unclassified, f"Paimon {version} option keys lakestore does not classify: {unclassified}"
    counts = {kind: sum(1 for k in keys if opts.classify(k) == kind) for kind in ("implemented", "ignored", "refused")}
    print(f"Paimon {version}: {len(keys)} keys, {counts}")


@pytest.mark.parametrize("version", VERSIONS)
def test_fallback_keys_are_classified_as_paimon_resolves_them(version):
    keys = paimon_option_keys(version)
    for key, (fallback_of, _) in keys.items():
        if not fallback_of or key in ("file.compression",):  # file.compression is format-table.file.compression's fallback too
            continue
        assert option_keys.FALLBACK_KEYS.get(key) == fallback_of, key
        assert opts.classify(key) == opts.classify(fallback_of), key


def test_classification_is_exclusive():
    specs = set(opts._SPECS)
    assert not specs & set(option_keys.IGNORED)
    assert not specs & set(option_keys.REFUSED)
    assert not set(option_keys.IGNORED) & set(option_keys.REFUSED)
    assert all(refusal.reason for refusal in option_keys.REFUSED.values())


def test_defaults_follow_paimon_2_0():
    """lakestore's defaults for the keys it implements are Paimon 2.0's (durations and sizes as
    lakestore spells them, compared parsed)."""
    keys = paimon_option_keys("2.0.0")
    core = opts.CoreOptions({}, has_primary_key=True)
    expected = {
        "metadata.stats-mode": "truncate(16)",
        "metadata.stats-dense-store": True,
        "metadata.stats-keep-first-n-columns": -1,
        "file.compression": "zstd",
        "file.compression.zstd-level": 1,
        "snapshot.expire.limit": 50,
        "partition.legacy-name": True,
        "manifest.merge-min-count": 30,
        "num-sorted-run.compaction-trigger": 5,
    }
    for key, value in expected.items():
        assert keys[key][1].lower() == str(value).lower(), key
        assert core.get(key) == value, key
    # every implemented key with a plain default agrees with Paimon's
    for key, spec in opts._SPECS.items():
        paimon = keys.get(key)
        if paimon is None or spec.default is None or not paimon[1]:
            continue
        if paimon[1].startswith("PT"):  # a java.time.Duration
            assert parse_duration_ms(spec.default) == _iso_duration_ms(paimon[1]), key
        elif paimon[1].endswith((" kb", " mb", " gb", " bytes")):  # Paimon's MemorySize
            assert parse_memory(spec.default) == parse_memory(paimon[1]), key
        else:
            assert spec.default.lower() == paimon[1].lower(), (key, spec.default, paimon[1])


def _iso_duration_ms(text: str) -> int:
    match = re.fullmatch(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?", text)
    assert match is not None, text
    hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    return round(((hours * 60 + minutes) * 60 + seconds) * 1000)


@pytest.mark.parametrize(
    ("options", "writes", "reads"),
    [
        ({"compaction.offpeak.start.hour": "2"}, True, True),  # ignored: compaction policy
        ({"lookup.cache-rows": "5"}, True, True),  # ignored by prefix
        ({"write.compaction-skip": "true"}, True, True),  # fallback of write-only: implemented
        ({"stream-scan-mode": "none"}, True, True),  # refused only away from Paimon's default
        ({"stream-scan-mode": "file-monitor"}, False, False),
        ({"scan.snapshot-id": "2"}, True, True),  # honoured by batch reads (lakestore/scan/time_travel.py)
        ({"incremental-between": "1,2"}, True, True),  # honoured by batch reads (lakestore/scan/incremental.py)
        ({"sequence.snapshot-ordering": "false"}, True, True),
        ({"sequence.snapshot-ordering": "true"}, False, False),
        ({"data-file.thin-mode": "true"}, False, False),
        ({"tag.period-formatter": "without_dashes"}, True, True),  # implemented (lifecycle/tags.py)
        ({"cross-partition-upsert.index-ttl": "1 d"}, False, True),
        ({"option.of.a.later.paimon": "x"}, False, True),
    ],
)
def test_existing_table_options_block_what_they_must(options, writes, reads):
    found = opts.unsupported(options, primary_keys=["id"], partition_keys=[])
    key = next(iter(options))
    assert (key not in dict(found.blocks_writes)) is writes
    assert (key not in dict(found.blocks_reads)) is reads
    if not writes:
        with pytest.raises(UnsupportedTableError, match=key.replace(".", r"\.")) as info:
            opts.require_supported(found, operation="write", table="db.t")
        assert "invalid value" not in str(info.value)


def test_write_compaction_skip_falls_back_to_write_only():
    assert opts.CoreOptions({"write.compaction-skip": "true"}, has_primary_key=True).write_only is True
    assert opts.CoreOptions({"write.compaction-skip": "true", "write-only": "false"}, has_primary_key=True).write_only is False
    assert opts.CoreOptions({"deduplicate.ignore-delete": "true"}, has_primary_key=True).ignore_delete is True


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("metadata.stats-mode", "truncate(0)"),
        ("metadata.stats-mode", "minmax"),
        ("file.compression", "lzo"),
        ("file.format", "lance"),
        ("changelog-file.format", "csv"),
        ("fields.v.stats-mode", "all"),
    ],
)
def test_bad_values_name_option_and_feature(key, value):
    with pytest.raises(opts.OptionError) as info:
        opts.validate({key: value})
    message = str(info.value)
    assert key in message and "invalid value" not in message


@pytest.mark.parametrize(
    "options",
    [
        {"tag.automatic-creation": "on-checkpoint"},
        {"changelog-file.compression": "lzo"},
        {"metadata.stats-mode": "truncate(0)"},
        {"snapshot.expire.execution-mode": "nonsense"},
    ],
    ids=lambda o: next(iter(o)),
)
def test_write_side_values_lakestore_lacks_refuse_writes_and_keep_reads(tmp_path, options):
    """A table another engine wrote with a value lakestore does not implement for an option that
    only steers writing and maintenance stays readable; writes refuse by name."""
    import json

    import pyarrow as pa

    import lakestore

    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    table = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options={"bucket": "1"})
    table.write_arrow(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=schema))
    path = Path(table.path) / "schema" / f"schema-{table.schema.id}"
    doc = json.loads(path.read_text())
    doc["options"].update(options)
    path.write_text(json.dumps(doc))
    table = lakestore.Table.from_path(table.path)
    assert sorted(table.to_arrow()["v"].to_pylist()) == ["a", "b"]
    key = next(iter(options))
    with pytest.raises(UnsupportedTableError, match=re.escape(key)) as info:
        table.write_arrow(pa.table({"id": [3], "v": ["c"]}, schema=schema))
    assert "invalid value" not in str(info.value)
    with pytest.raises(UnsupportedTableError, match=re.escape(key)):
        table.compact(full=True)
    with pytest.raises(opts.OptionError, match=re.escape(key)):
        catalog.create_table("db.u", schema=schema, primary_keys=["id"], options=options)
