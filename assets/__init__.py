"""Dagster assets of the TPC-H lakehouse pipeline: landing files, per-table lifecycle stages
(ingestion on Spark, compaction, tags, expiration), dimension tables and marts.

Modules here define assets only; ``pipelines.definitions`` wires them into jobs, schedules and
sensors. Asset modules must not use ``from __future__ import annotations`` (Dagster reads the
typed ``context`` parameter at definition time).
"""
