"""Dagster wiring: partitions, jobs, schedules, sensors and the ``Definitions`` object."""
