"""Table data credentials for a warehouse on S3: the table-token endpoint's answer.

Each request assumes the configured IAM role through STS (``AssumeRole``) with a session policy
that narrows the role to the one table's prefix (``s3://bucket/wh/db.db/t/``, every prefix with
its trailing slash, so ``db.db/t1/`` never covers ``db.db/t10/``): reading the objects there and
listing the bucket only under that prefix; for principals with ``write`` also putting and
deleting the table's data files (its partition and bucket directories, or
``data-file.path-directory``), manifests and index files, but never its snapshots, tags,
schemas or branches (those change only through the server's endpoints: an explicit deny).
Clients therefore cannot expire snapshots or write statistics files with vended credentials:
expiration runs where the warehouse's own credentials are (``lakestore expire``). The effective
permissions are the intersection of the role's own policies and this session policy, so the
role needs (at least) those actions on the warehouse. The credentials
are returned under the keys both Paimon clients read (Hadoop S3A's ``fs.s3a.*``: Paimon Java's
``S3FileIO``; pypaimon 2.1 reads the same keys), with the endpoint, region and path style the
server itself uses; ``expiresAtMillis`` is the credentials' expiry as STS states it.

Credentials are neither logged nor kept: each request gets fresh ones (``repr`` shows none).
boto3 is an optional dependency (extra ``s3``).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from lakestore.errors import OptionError
from lakestore.io.s3 import S3Config

# keys of the token map (Hadoop S3A's names; pypaimon reads fs.s3a.access.key, ...)
ACCESS_KEY = "fs.s3a.access.key"
SECRET_KEY = "fs.s3a.secret.key"
SESSION_TOKEN = "fs.s3a.session.token"
CREDENTIALS_PROVIDER = "fs.s3a.aws.credentials.provider"
TEMPORARY_PROVIDER = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
READ_ACTIONS = ("s3:GetObject",)
WRITE_ACTIONS = ("s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts")
# what clients write: data files (partition directories ``k=v/``, unpartitioned ``bucket-N/``),
# manifests and index files; and what they must not: the server publishes these
DATA_PREFIXES = ("manifest/", "index/")
DEFAULT_DATA_PATTERNS = ("bucket-*", "*=*")
METADATA_PREFIXES = ("snapshot/", "tag/", "schema/", "branch/")
MIN_DURATION_S, MAX_DURATION_S = 900, 43_200  # STS's bounds for AssumeRole
_SESSION_NAME = re.compile(r"[^\w+=,.@-]")


def split_s3_path(path: str) -> tuple[str, str]:
    """(bucket, key prefix without slashes at either end) of ``s3://bucket/key``.

    Raises:
        OptionError: ``path`` is not an ``s3://`` (or ``s3a://``) URI with a bucket.
    """
    parsed = urlparse(path)
    if parsed.scheme not in ("s3", "s3a") or not parsed.netloc:
        raise OptionError(f"not an S3 location: {path!r}")
    return parsed.netloc, parsed.path.strip("/")


def session_policy(table_path: str, *, write: bool, data_directory: str | None = None) -> dict[str, Any]:
    """The session policy limiting credentials to the table under ``table_path``: reading its
    objects and listing under ``<table>/``; with ``write`` also put, delete and multipart on its
    data files (below ``data_directory`` when the table sets ``data-file.path-directory``),
    ``manifest/`` and ``index/``, with an explicit deny on ``snapshot/``, ``tag/``, ``schema/``
    and ``branch/``.

    Raises:
        OptionError: ``table_path`` is not an S3 URI below a bucket, or ``data_directory`` is
            not a relative directory.
    """
    bucket, key = split_s3_path(table_path)
    if not key:
        raise OptionError(f"a table's credentials need a key prefix, not a whole bucket: {table_path!r}")
    arn = f"arn:aws:s3:::{bucket}/{key}/"  # every prefix ends with '/': t1/ never covers t10/
    statements: list[dict[str, Any]] = [
        # the bare key is one object (the table's directory marker, which S3A heads), not a prefix
        {"Sid": "TableObjects", "Effect": "Allow", "Action": list(READ_ACTIONS), "Resource": [f"arn:aws:s3:::{bucket}/{key}", arn + "*"]},
        {
            "Sid": "ListTablePrefix",
            "Effect": "Allow",
            "Action": ["s3:ListBucket"],
            "Resource": [f"arn:aws:s3:::{bucket}"],
            "Condition": {"StringLike": {"s3:prefix": [f"{key}/", f"{key}/*"]}},
        },
    ]
    if write:
        if data_directory:
            segments = data_directory.strip("/").split("/")
            if any(s in ("", ".", "..") or "*" in s or "?" in s for s in segments):
                raise OptionError(f"data-file.path-directory must be a relative directory, got {data_directory!r}")
            data = ["/".join(segments) + "/*"]
        else:
            data = list(DEFAULT_DATA_PATTERNS)
        files = [arn + prefix + "*" for prefix in DATA_PREFIXES] + [arn + pattern for pattern in data]
        statements.append({"Sid": "TableFilesWrite", "Effect": "Allow", "Action": list(WRITE_ACTIONS), "Resource": files})
        denied = [arn + prefix + "*" for prefix in METADATA_PREFIXES]
        statements.append({"Sid": "TableMetadataThroughServer", "Effect": "Deny", "Action": list(WRITE_ACTIONS), "Resource": denied})
    return {"Version": "2012-10-17", "Statement": statements}


@dataclass(frozen=True)
class S3CredentialVendor:
    """Vends table-scoped credentials from ``AssumeRole(role_arn)``.

    Args:
        role_arn: the role assumed for every token (its policies bound what any token allows).
        duration_s: lifetime of each token's credentials (900 to 43200 s; above the role's
            maximum session duration STS refuses). Paimon's clients (Java's and pypaimon's
            ``RESTTokenFileIO``) ask for a new token when one has under an hour left, so an hour
            or less means a token request (an ``AssumeRole``) before most file accesses.
        s3: the server's S3 configuration: the endpoint, region and path style handed to
            clients, and the credentials that call STS (None: boto3's default chain).
        sts_endpoint: STS's endpoint (None: AWS's, or ``AWS_ENDPOINT_URL_STS``).
    """

    role_arn: str
    duration_s: int = 7200
    s3: S3Config = field(default_factory=S3Config)
    sts_endpoint: str | None = None
    _client: list[Any] = field(default_factory=list, repr=False, compare=False)
    _guard: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.role_arn.startswith("arn:"):
            raise OptionError(f"the role to vend credentials from must be an IAM role ARN, got {self.role_arn!r}")
        if not MIN_DURATION_S <= self.duration_s <= MAX_DURATION_S:
            raise OptionError(f"credential duration must be {MIN_DURATION_S} to {MAX_DURATION_S} s (STS's bounds), got {self.duration_s}")

    def _sts(self) -> Any:
        with self._guard:
            if not self._client:
                try:
                    import boto3
                except ImportError as exc:
                    raise OptionError("vending S3 credentials needs boto3: pip install 'lakestore[s3]'") from exc
                self._client.append(
                    boto3.session.Session().client(
                        "sts",
                        endpoint_url=self.sts_endpoint,
                        region_name=self.s3.region or "us-east-1",
                        aws_access_key_id=self.s3.access_key,
                        aws_secret_access_key=self.s3.secret_key,
                        aws_session_token=self.s3.session_token,
                    )
                )
            return self._client[0]

    def vend(self, table_path: str, *, write: bool, principal: str, data_directory: str | None = None) -> tuple[dict[str, str], int]:
        """(token map, expiry in epoch ms) for ``table_path``; ``write`` False: read-only;
        ``data_directory``: the table's ``data-file.path-directory``, if any.

        Raises:
            OptionError: ``table_path`` is not on S3, ``data_directory`` is not relative, or
                boto3 is missing.
            botocore.exceptions.ClientError: STS refused (the role, its trust or duration).
        """
        policy = session_policy(table_path, write=write, data_directory=data_directory)
        name = _SESSION_NAME.sub("-", f"lakestore-{principal}")[:64]
        answer = self._sts().assume_role(
            RoleArn=self.role_arn, RoleSessionName=name, Policy=json.dumps(policy, separators=(",", ":")), DurationSeconds=self.duration_s
        )
        creds = answer["Credentials"]
        token = {
            ACCESS_KEY: creds["AccessKeyId"],
            SECRET_KEY: creds["SecretAccessKey"],
            SESSION_TOKEN: creds["SessionToken"],
            CREDENTIALS_PROVIDER: TEMPORARY_PROVIDER,
            "fs.s3a.path.style.access": "true" if self.s3.path_style else "false",
        }
        if self.s3.endpoint:
            token["fs.s3a.endpoint"] = self.s3.endpoint
        if self.s3.region:
            token["fs.s3a.endpoint.region"] = self.s3.region  # Hadoop S3A's name
            token["fs.s3a.region"] = self.s3.region  # pypaimon's
        return token, int(creds["Expiration"].timestamp() * 1000)
