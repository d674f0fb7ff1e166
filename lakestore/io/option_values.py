"""Parsing catalog option values (booleans, durations) the same way in every io module."""

from __future__ import annotations

from typing import Any

from lakestore.errors import OptionError
from lakestore.units import parse_duration_ms


def duration_option(key: str, text: str) -> int:
    """A catalog option's duration in milliseconds.

    Raises:
        OptionError: ``text`` is not a duration (naming ``key``).
    """
    try:
        return parse_duration_ms(text)
    except ValueError as exc:
        raise OptionError(f"option {key!r}: {exc}") from exc


def parse_bool(key: str, text: Any) -> bool:
    """A catalog option's boolean (``true``/``1``/``yes``, ``false``/``0``/``no``/empty).

    Raises:
        OptionError: anything else (naming ``key``).
    """
    value = str(text).strip().lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no", ""):
        return False
    raise OptionError(f"option {key!r}: not a boolean: {text!r}")
