"""Choosing a FileIO for a warehouse or table URI."""

from __future__ import annotations

from collections.abc import Mapping

from lakestore.errors import OptionError
from lakestore.io.fileio import FileIO, LocalFileIO
from lakestore.io.s3 import S3FileIO


def file_io_for(uri: str, options: Mapping[str, str] | None = None) -> FileIO:
    """``s3://``/``s3a://`` -> ``S3FileIO`` configured from ``options`` (then the AWS_* environment);
    a local path or ``file://`` -> ``LocalFileIO`` (link(2) publish, no lock needed)."""
    options = {str(k): str(v) for k, v in (options or {}).items()}
    text = str(uri)
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if scheme in ("s3", "s3a"):
        return S3FileIO.from_options(options)
    if scheme in ("", "file"):
        return LocalFileIO()
    raise OptionError(f"unsupported warehouse scheme {scheme!r} in {uri!r}: use a local path or s3://bucket/path")


def local_path(uri: str) -> str:
    """``file:///x`` -> ``/x``; other URIs unchanged."""
    text = str(uri)
    return text[len("file://") :] if text.startswith("file://") else text
