"""Names that become file or directory names: databases (``<name>.db``), tables, branches
(``branch-<name>``), tags (``tag-<name>``) and consumers (``consumer-<id>``). One check for all
of them, so a name either is one path segment the file system and object stores accept or is
refused with a typed error before any path is built from it.

Patterns are matched in full (``re.fullmatch``: ``$`` would also accept a final newline).
"""

from __future__ import annotations

import re

from lakestore.errors import InvalidIdentifierError, LakestoreError

MAX_FILE_NAME_BYTES = 255  # ext4, xfs, btrfs, APFS; longer segments fail with ENAMETOOLONG
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_name(
    name: object,
    what: str,
    *,
    pattern: re.Pattern[str] | None = None,
    prefix: str = "",
    suffix: str = "",
    error: type[LakestoreError] = InvalidIdentifierError,
) -> str:
    """``name`` itself when it is a string matching ``pattern`` in full (when given) and
    ``prefix + name + suffix`` is one path segment: not blank, not ``.`` or ``..``, no ``/``,
    ``\\`` or control character (NUL included), valid UTF-8, at most 255 bytes.

    Raises:
        InvalidIdentifierError: (or ``error``) it is not; the message says why, with the name
            shortened to 80 characters.
    """
    shown = repr(name[:80] + "..." if isinstance(name, str) and len(name) > 80 else name)
    if not isinstance(name, str) or not name:
        raise error(f"invalid {what} name {shown}: it must be a non-empty string")
    if _CONTROL.search(name) or "/" in name or "\\" in name:
        raise error(f"invalid {what} name {shown}: no '/', '\\' or control characters")
    if pattern is not None and not pattern.fullmatch(name):
        raise error(f"invalid {what} name {shown}: use letters, digits, '_' and '-'")
    segment = f"{prefix}{name}{suffix}"
    if segment in (".", ".."):
        raise error(f"invalid {what} name {shown}")
    try:
        size = len(segment.encode("utf-8"))
    except UnicodeEncodeError as exc:  # lone surrogates
        raise error(f"invalid {what} name {shown}: not valid Unicode") from exc
    if size > MAX_FILE_NAME_BYTES:
        limit = MAX_FILE_NAME_BYTES - len(prefix.encode()) - len(suffix.encode())
        raise error(f"invalid {what} name {shown}: longer than {limit} bytes")
    return name
