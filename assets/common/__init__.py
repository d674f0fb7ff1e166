"""Helpers shared by the asset packages (no Dagster definitions here)."""
