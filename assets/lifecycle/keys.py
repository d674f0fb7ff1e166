"""Asset keys and commit users of the lifecycle stages (shared by assets, marts and sensors)."""

import dagster as dg


def landing_key(table: str) -> dg.AssetKey:
    return dg.AssetKey(["landing", table])


def ingested_key(table: str) -> dg.AssetKey:
    return dg.AssetKey([table, "ingested"])


def compacted_key(table: str) -> dg.AssetKey:
    return dg.AssetKey([table, "compacted"])


def tagged_key(table: str) -> dg.AssetKey:
    return dg.AssetKey([table, "tagged"])


def expired_key(table: str) -> dg.AssetKey:
    return dg.AssetKey([table, "expired"])


def ingest_user(table: str) -> str:
    return f"ingest-{table}"


def changelog_key(table: str) -> dg.AssetKey:
    return dg.AssetKey([table, "changelog"])
