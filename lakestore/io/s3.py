"""Tables on S3-compatible object storage (AWS S3, MinIO, Ceph, moto, ...).

Built on ``pyarrow.fs.S3FileSystem``: pyarrow is already lakestore's parquet engine, so parquet
reads and writes stream through Arrow's C++ S3 client without a Python file-system shim, and no
second S3 stack (fsspec/s3fs/aiobotocore) has to be installed or kept fork-safe.

Paths are URIs (``s3://bucket/key``) everywhere in lakestore; this class strips the scheme for
pyarrow (``arrow_path``) and adds it back to listed entries.

Object stores have no atomic create-if-absent rename, so publishing a snapshot, schema or tag
needs one of two safe mechanisms, chosen by option:

1. ``s3.conditional-create=true``: ``PUT`` with ``If-None-Match: *`` (AWS S3 since 2024, MinIO,
   and others); the store refuses the second creator with 412. pyarrow's client cannot send that
   header, so this one request goes through botocore. ``try_publish`` is this.
2. ``lock.enabled=true``: the catalog lock (Paimon's JDBC lock, ``lakestore.io.lock``, or the Hive
   Metastore's), which the table's publisher (``lakestore.io.publish``), not this class, holds
   around ``try_publish_under_lock``: an exists-check and a put (a conditional put when enabled).

``try_publish`` without conditional writes refuses with ``UnsafePublishError`` instead of racing
(a plain check-then-put lets two committers both "create" ``snapshot-N`` and one commit is
silently lost). This class holds no lock.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.fs as pafs

from lakestore.errors import OptionError, UnsafePublishError
from lakestore.io.fileio import FileIO, FileStatus
from lakestore.io.option_values import duration_option, parse_bool

SCHEMES = ("s3://", "s3a://")
CONDITIONAL_CREATE = "s3.conditional-create"

# Option names (Paimon's ``s3.*``, pypaimon's ``fs.s3.*``), then the AWS environment variables.
_ENDPOINT = (("s3.endpoint", "fs.s3.endpoint", "s3a.endpoint"), ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"))
_REGION = (("s3.region", "fs.s3.region", "s3a.region"), ("AWS_REGION", "AWS_DEFAULT_REGION"))
_ACCESS_KEY = (("s3.access-key", "fs.s3.accessKeyId", "s3a.access-key", "s3.access.key"), ("AWS_ACCESS_KEY_ID",))
_SECRET_KEY = (("s3.secret-key", "fs.s3.accessKeySecret", "s3a.secret-key", "s3.secret.key"), ("AWS_SECRET_ACCESS_KEY",))
_SESSION_TOKEN = (("s3.session-token", "fs.s3.securityToken", "s3a.session-token"), ("AWS_SESSION_TOKEN",))
_PATH_STYLE = (("s3.path.style.access", "s3.path-style-access", "fs.s3.path-style-access", "s3a.path.style.access"), ())
REQUEST_TIMEOUT = "s3.request-timeout"
# The credentials: every alias of each option, with the environment variable a process that is
# not given the option reads instead (``lakestore.io.secrets`` classifies them).
CREDENTIALS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (_ACCESS_KEY, _SECRET_KEY, _SESSION_TOKEN)


try:
    import botocore  # noqa: F401

    _HAVE_BOTO = True
except ImportError:  # pragma: no cover - depends on the installation
    _HAVE_BOTO = False


def is_s3_uri(path: str) -> bool:
    return str(path).startswith(SCHEMES)


def _lookup(options: Mapping[str, str], names: tuple[tuple[str, ...], tuple[str, ...]]) -> str | None:
    keys, env = names
    for key in keys:
        if options.get(key):
            return str(options[key])
    for var in env:
        if os.environ.get(var):
            return os.environ[var]
    return None


@dataclass(frozen=True, slots=True)
class S3Config:
    """Where and how to reach the store; picklable, so executors rebuild the same client."""

    endpoint: str | None = None  # "http://127.0.0.1:9000"; None: AWS
    region: str | None = None
    access_key: str | None = None
    secret_key: str | None = None
    session_token: str | None = None
    path_style: bool = False
    request_timeout_s: float = 60.0

    def __repr__(self) -> str:  # never print credentials
        return f"S3Config(endpoint={self.endpoint!r}, region={self.region!r}, path_style={self.path_style})"

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> S3Config:
        endpoint = _lookup(options, _ENDPOINT)
        if endpoint and "://" not in endpoint:
            endpoint = f"https://{endpoint}"
        path_style = _lookup(options, _PATH_STYLE)
        key, secret = _lookup(options, _ACCESS_KEY), _lookup(options, _SECRET_KEY)
        if (key is None) != (secret is None):
            raise OptionError("S3 credentials need both an access key ('s3.access-key') and a secret key ('s3.secret-key')")
        return cls(
            endpoint=endpoint,
            region=_lookup(options, _REGION) or ("us-east-1" if endpoint else None),
            access_key=key,
            secret_key=secret,
            session_token=_lookup(options, _SESSION_TOKEN),
            # custom endpoints (MinIO, moto, Ceph) usually have no per-bucket DNS names
            path_style=parse_bool(_PATH_STYLE[0][0], path_style) if path_style is not None else endpoint is not None,
            request_timeout_s=duration_option(REQUEST_TIMEOUT, options.get(REQUEST_TIMEOUT, "60 s")) / 1000,
        )

    def to_options(self) -> dict[str, str]:
        """The catalog options ``from_options`` builds this configuration from, credentials
        included (``lakestore.io.secrets`` tells them apart)."""
        options = {
            _PATH_STYLE[0][1]: "true" if self.path_style else "false",
            REQUEST_TIMEOUT: f"{round(self.request_timeout_s * 1000)} ms",
        }
        for names, value in (
            (_ENDPOINT, self.endpoint),
            (_REGION, self.region),
            (_ACCESS_KEY, self.access_key),
            (_SECRET_KEY, self.secret_key),
            (_SESSION_TOKEN, self.session_token),
        ):
            if value is not None:
                options[names[0][0]] = value
        return options

    def arrow_filesystem(self) -> pafs.S3FileSystem:
        kwargs: dict[str, Any] = {
            "region": self.region,
            "request_timeout": self.request_timeout_s,
            "connect_timeout": self.request_timeout_s,
            "force_virtual_addressing": not self.path_style,
            # small objects (hints, snapshots, manifests) then go up in one PUT instead of a
            # three-request multipart upload
            "allow_delayed_open": True,
        }
        if self.access_key is not None:
            kwargs.update(access_key=self.access_key, secret_key=self.secret_key, session_token=self.session_token)
        if self.endpoint:
            parsed = urlparse(self.endpoint)
            kwargs.update(scheme=parsed.scheme or "https", endpoint_override=parsed.netloc + parsed.path.rstrip("/"))
        return pafs.S3FileSystem(**kwargs)

    def boto_client(self) -> Any:
        try:
            import boto3
            from botocore.config import Config
        except ImportError as exc:
            raise OptionError(f"'{CONDITIONAL_CREATE}=true' needs boto3: pip install 'lakestore[s3]'") from exc
        config = Config(
            s3={"addressing_style": "path" if self.path_style else "virtual"},
            retries={"mode": "standard", "max_attempts": 5},
            connect_timeout=self.request_timeout_s,
            read_timeout=self.request_timeout_s,
        )
        return boto3.session.Session().client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=self.region,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            aws_session_token=self.session_token,
            config=config,
        )


class S3FileIO(FileIO):
    """FileIO on an S3-compatible store; see the module docstring for how publishing stays safe."""

    def __init__(self, config: S3Config | None = None, *, conditional_create: bool = False) -> None:
        self.config = config or S3Config.from_options({})
        self.conditional_create = conditional_create
        self._fs: pafs.S3FileSystem | None = None
        self._client: Any = None
        self._client_pid = -1

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> S3FileIO:
        """The S3 file system ``options`` (then the AWS_* environment) describe; the catalog
        lock's options are the publisher's (``lakestore.io.factory.publisher_for``).

        Raises:
            OptionError: an invalid option (half a credential pair, a bad duration or boolean).
        """
        return cls(
            S3Config.from_options(options),
            conditional_create=parse_bool(CONDITIONAL_CREATE, options.get(CONDITIONAL_CREATE, "false")),
        )

    def catalog_options(self) -> dict[str, str] | None:
        return {**self.config.to_options(), CONDITIONAL_CREATE: "true" if self.conditional_create else "false"}

    # Pickled (configuration only; clients are rebuilt in the receiving process).
    def __getstate__(self) -> dict:
        return {"config": self.config, "conditional_create": self.conditional_create}

    def __setstate__(self, state: dict) -> None:
        type(self).__init__(self, state["config"], conditional_create=state["conditional_create"])

    def __repr__(self) -> str:
        mode = "conditional-create" if self.conditional_create else "check-then-put"
        return f"S3FileIO({self.config!r}, publish={mode})"

    # -- paths --------------------------------------------------------------------------------
    def arrow_path(self, path: str) -> str:
        for scheme in SCHEMES:
            if path.startswith(scheme):
                return path[len(scheme) :]
        return path

    def handles(self, path: str) -> bool:
        return is_s3_uri(path)

    @staticmethod
    def _uri(key: str) -> str:
        return f"s3://{key}"

    def _split(self, path: str) -> tuple[str, str]:
        bucket, _, key = self.arrow_path(path).partition("/")
        return bucket, key

    def arrow_filesystem(self) -> pafs.FileSystem:
        if self._fs is None:
            self._fs = self.config.arrow_filesystem()
        return self._fs

    def _boto(self) -> Any:
        # botocore clients are not fork-safe: a forked child (Spark's Python workers) builds its own
        if self._client is None or self._client_pid != os.getpid():
            self._client = self.config.boto_client()
            self._client_pid = os.getpid()
        return self._client

    # -- reads --------------------------------------------------------------------------------
    def read_bytes(self, path: str) -> bytes:
        # one GET through botocore when it is installed; pyarrow's input streams first HEAD the
        # object for its size, doubling the requests of metadata-heavy commits
        if _HAVE_BOTO:
            from botocore.exceptions import ClientError

            bucket, key = self._split(path)
            try:
                return self._boto().get_object(Bucket=bucket, Key=key)["Body"].read()
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "NotFound"):
                    raise FileNotFoundError(path) from exc
                raise
        with self.arrow_filesystem().open_input_stream(self.arrow_path(path)) as stream:
            return stream.read()

    def exists(self, path: str) -> bool:
        return self.arrow_filesystem().get_file_info(self.arrow_path(path)).type != pafs.FileType.NotFound

    def file_size(self, path: str) -> int:
        info = self.arrow_filesystem().get_file_info(self.arrow_path(path))
        if info.type == pafs.FileType.NotFound:
            raise FileNotFoundError(path)
        return int(info.size or 0)

    def list_status(self, path: str) -> list[FileStatus]:
        selector = pafs.FileSelector(self.arrow_path(path).rstrip("/"), allow_not_found=True, recursive=False)
        out = []
        for info in self.arrow_filesystem().get_file_info(selector):
            is_dir = info.type == pafs.FileType.Directory
            mtime = info.mtime_ns // 1_000_000 if info.mtime_ns is not None else 0
            out.append(FileStatus(self._uri(info.path), 0 if is_dir else int(info.size or 0), mtime, is_dir))
        return out

    def list_names(self, path: str) -> list[str]:
        return [s.path.rsplit("/", 1)[-1] for s in self.list_status(path)]

    # -- writes -------------------------------------------------------------------------------
    def _put(self, path: str, data: bytes) -> None:
        # A single PUT is atomic on S3: readers see the old object, no object, or the whole new one.
        with self.arrow_filesystem().open_output_stream(self.arrow_path(path)) as sink:
            sink.write(data)

    def write_bytes(self, path: str, data: bytes, *, overwrite: bool = True) -> None:
        """``overwrite=False`` writes files under fresh unique names (index files, index
        manifests, Iceberg manifests), never a name another writer publishes: a conditional put
        when enabled, else an absence check and a put (not a publish, so no lock is needed)."""
        if overwrite:
            self._put(path, data)
        elif not self._create_if_absent(path, data):
            raise FileExistsError(path)

    @contextmanager
    def open_output(self, path: str) -> Iterator[pa.NativeFile]:
        # A multipart upload becomes visible only when completed (on close), so a writer that dies
        # leaves nothing behind. Arrow completes the upload even when the block fails (it has no
        # abort in Python), so a failed block deletes the object it just completed: lakestore only
        # writes uniquely named data/manifest files this way, never referenced before a commit.
        key = self.arrow_path(path)
        sink = self.arrow_filesystem().open_output_stream(key)
        try:
            yield sink
        except BaseException:
            try:
                sink.close()
            finally:
                self.delete(path)
            raise
        sink.close()

    def try_publish(self, path: str, data: bytes) -> bool:
        if self.conditional_create:
            return self._put_if_absent(path, data)
        raise UnsafePublishError(
            f"refusing to publish {path}: object storage has no atomic create-if-absent, so concurrent "
            "commits could overwrite each other. Enable one of: the catalog lock, "
            "options={'lock.enabled': 'true', 'uri': 'jdbc:sqlite:/shared/path/locks.db'} "
            "(or 'uri': 'jdbc:postgresql://host:5432/db' with 'jdbc.user'/'jdbc.password'; every writer "
            f"must use the same lock database); or conditional writes, '{CONDITIONAL_CREATE}': 'true', "
            "if the store honours 'If-None-Match: *' (AWS S3, MinIO, Ceph RGW, R2)."
        )

    def try_publish_under_lock(self, path: str, data: bytes) -> bool:
        """Under the table's lock nobody else publishes into the table until it is released: a
        conditional put when enabled, else an absence check and a put."""
        return self._create_if_absent(path, data)

    def _create_if_absent(self, path: str, data: bytes) -> bool:
        if self.conditional_create:
            return self._put_if_absent(path, data)
        if self.exists(path):
            return False
        self._put(path, data)
        return True

    def _put_if_absent(self, path: str, data: bytes) -> bool:
        from botocore.exceptions import ClientError

        bucket, key = self._split(path)
        for attempt in range(10):
            try:
                self._boto().put_object(Bucket=bucket, Key=key, Body=data, IfNoneMatch="*")
                return True
            except ClientError as exc:
                code = str(exc.response.get("Error", {}).get("Code", ""))
                status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
                if code == "PreconditionFailed" or status == 412:
                    # botocore retries timed-out requests: a 412 can answer our own earlier
                    # attempt that did land. Same bytes there means the object is ours.
                    try:
                        return self.read_bytes(path) == data
                    except FileNotFoundError:
                        return False
                # 409: another conditional write of this key is in flight; AWS asks to retry
                if code == "ConditionalRequestConflict" or status == 409:
                    time.sleep(min(0.05 * 2**attempt, 1.0))
                    continue
                raise
        raise OSError(f"conditional create of {path} kept conflicting")

    # -- deletes and renames ------------------------------------------------------------------
    def delete(self, path: str) -> None:
        with suppress(FileNotFoundError):
            self.arrow_filesystem().delete_file(self.arrow_path(path))

    def delete_dir(self, path: str) -> None:
        with suppress(FileNotFoundError):
            self.arrow_filesystem().delete_dir(self.arrow_path(path).rstrip("/"))

    def mkdirs(self, path: str) -> None:
        key = self.arrow_path(path).rstrip("/")
        if "/" not in key:
            return  # the bucket itself: lakestore never creates buckets
        self.arrow_filesystem().create_dir(key, recursive=True)

    def rename(self, src: str, dst: str) -> bool:
        """Copy then delete: S3 has no rename, so this is not atomic. lakestore renames only whole
        tables (``Catalog.rename_table``), which is not a concurrent-commit path."""
        fs = self.arrow_filesystem()
        if self.exists(dst):
            return False
        source, target = self.arrow_path(src).rstrip("/"), self.arrow_path(dst).rstrip("/")
        info = fs.get_file_info(source)
        if info.type == pafs.FileType.NotFound:
            raise FileNotFoundError(src)
        if info.type == pafs.FileType.File:
            fs.copy_file(source, target)
            fs.delete_file(source)
            return True
        fs.create_dir(target, recursive=True)
        for entry in fs.get_file_info(pafs.FileSelector(source, recursive=True)):
            relative = entry.path[len(source) + 1 :]
            if entry.type == pafs.FileType.Directory:
                fs.create_dir(f"{target}/{relative}", recursive=True)
            else:
                fs.copy_file(entry.path, f"{target}/{relative}")
        fs.delete_dir(source)
        return True
