"""A Hive Metastore Thrift client: the Hive catalog's (``lakestore.catalog.hive``) and the Hive
catalog lock's (``lakestore.io.hive_lock``) connection to HMS.

It speaks the metastore's plain Thrift protocol (unframed binary, no SASL: the HMS default) with
the ``thrift`` package and the Hive 4 bindings ``pyiceberg[hive]`` ships (``hive_metastore``);
``pip install 'lakestore[hive]'`` installs both. Only calls that Hive 2.3, 3.x and 4.x all serve
are used: ``get_table_req`` (HMS 4 removed ``get_table`` and ``get_table_objects_by_name``),
``create_table``, ``alter_table_with_environment_context``, ``lock`` / ``check_lock`` /
``unlock`` / ``heartbeat``, ``add_partitions_req``, ...

``uri`` is Paimon's option (``hive.metastore.uris``): ``thrift://host:port``, several separated by
commas (tried in order). Connections are pooled, ``client-pool-size`` per process (Paimon's
default 2), and never shared across ``fork``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import queue
import threading
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from lakestore.errors import CatalogUnreachableError, HiveMetastoreError, InvalidCatalogUriError, MissingDriverError


@dataclass(frozen=True)
class _Thrift:
    """The optional client's modules (``pip install 'lakestore[hive]'``), imported on first use:
    ``import lakestore`` (and every Spark worker) does not pay for them."""

    ttypes: Any
    ThriftHiveMetastore: Any  # noqa: N815 - the module's name
    TBinaryProtocol: Any  # noqa: N815
    TSocket: Any  # noqa: N815
    TTransport: Any  # noqa: N815


@functools.cache
def _thrift() -> _Thrift:
    """The client's modules.

    Raises:
        MissingDriverError: the Hive client packages are not installed.
    """
    try:
        from hive_metastore import ThriftHiveMetastore  # noqa: PLC0415 - optional, imported on first use
        from hive_metastore import ttypes as hms  # noqa: PLC0415
        from thrift.protocol import TBinaryProtocol  # noqa: PLC0415
        from thrift.transport import TSocket, TTransport  # noqa: PLC0415
    except ImportError as exc:
        raise MissingDriverError(
            "metastore=hive needs the Hive Metastore client: pip install 'lakestore[hive]' (the packages 'thrift' and "
            f"'pyiceberg[hive]', which ships the metastore's bindings); import failed: {exc}"
        ) from exc
    return _Thrift(hms, ThriftHiveMetastore, TBinaryProtocol, TSocket, TTransport)


T = TypeVar("T")

URI = "uri"
HIVE_CONF_DIR = "hive-conf-dir"
CLIENT_POOL_SIZE = "client-pool-size"
HIVE_SITE = "hive-site.xml"
METASTORE_URIS = "hive.metastore.uris"
METASTORE_WAREHOUSE = "hive.metastore.warehouse.dir"
# lakestore's: the socket timeout of a metastore call (Hive's hive.metastore.client.socket.timeout)
SOCKET_TIMEOUT = "hive.metastore.client.socket.timeout"
DEFAULT_SOCKET_TIMEOUT_S = 600.0


def ttypes() -> Any:
    """The metastore's Thrift types (``hive_metastore.ttypes``).

    Raises:
        MissingDriverError: the Hive client packages are not installed.
    """
    return _thrift().ttypes


def read_hive_site(conf_dir: str) -> dict[str, str]:
    """The properties of ``<conf_dir>/hive-site.xml`` (Paimon's ``hive-conf-dir``).

    Raises:
        OptionError (InvalidCatalogUriError): the file is missing or not a Hadoop configuration file.
    """
    path = os.path.join(conf_dir, HIVE_SITE)
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise InvalidCatalogUriError(f"option {HIVE_CONF_DIR!r}={conf_dir!r}: cannot read {path}: {exc}") from exc
    props: dict[str, str] = {}
    for prop in root.iter("property"):
        name, value = prop.findtext("name"), prop.findtext("value")
        if name:
            props[name.strip()] = (value or "").strip()
    return props


def hive_conf(options: Mapping[str, str]) -> dict[str, str]:
    """The Hive configuration Paimon's ``createHiveConf`` builds: ``hive-site.xml`` from
    ``hive-conf-dir`` (else the ``HIVE_CONF_DIR`` environment variable), then every catalog
    option on top (``uri`` becomes ``hive.metastore.uris``)."""
    conf_dir = options.get(HIVE_CONF_DIR) or os.environ.get("HIVE_CONF_DIR")
    conf = read_hive_site(conf_dir) if conf_dir else {}
    conf.update({str(k): str(v) for k, v in options.items()})
    if options.get(URI):
        conf[METASTORE_URIS] = str(options[URI])
    return conf


def parse_uris(text: str | None) -> tuple[tuple[str, int], ...]:
    """``thrift://host:port[,thrift://host2:port2]`` -> ((host, port), ...).

    Raises:
        InvalidCatalogUriError: empty, or an address that is not ``thrift://host:port``.
    """
    if not text or not text.strip():
        raise InvalidCatalogUriError(
            f"metastore=hive needs option {URI!r}: the Hive Metastore's Thrift address, e.g. 'thrift://metastore-host:9083' "
            f"(or a {HIVE_CONF_DIR!r} whose {HIVE_SITE} sets {METASTORE_URIS})"
        )
    out = []
    for part in text.split(","):
        part = part.strip()
        try:
            parsed = urlsplit(part)
            port = parsed.port
        except ValueError:
            port, parsed = None, None
        if parsed is None or parsed.scheme != "thrift" or not parsed.hostname or port is None or parsed.path not in ("", "/"):
            raise InvalidCatalogUriError(
                f"option {URI!r}: {part!r} is not a Hive Metastore address; use 'thrift://host:port' (default port 9083)"
            )
        out.append((parsed.hostname, port))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class MetastoreAddress:
    """Where the metastore is and how this process talks to it (picklable: only this travels)."""

    uris: tuple[tuple[str, int], ...]
    pool_size: int = 2
    timeout_s: float = DEFAULT_SOCKET_TIMEOUT_S

    @classmethod
    def from_conf(cls, conf: Mapping[str, str]) -> MetastoreAddress:
        """Raises ``InvalidCatalogUriError`` for a missing or malformed address, ``OptionError``
        for a bad ``client-pool-size``."""
        try:
            pool = int(conf.get(CLIENT_POOL_SIZE, "2"))
        except ValueError:
            pool = 0
        if pool < 1:
            raise InvalidCatalogUriError(f"option {CLIENT_POOL_SIZE!r}: a positive integer, got {conf.get(CLIENT_POOL_SIZE)!r}")
        timeout = str(conf.get(SOCKET_TIMEOUT, "")).strip().rstrip("s")
        return cls(parse_uris(conf.get(METASTORE_URIS)), pool, float(timeout) if timeout else DEFAULT_SOCKET_TIMEOUT_S)

    def text(self) -> str:
        return ",".join(f"thrift://{h}:{p}" for h, p in self.uris)


class _Connection:
    def __init__(self, address: MetastoreAddress) -> None:
        t = _thrift()
        errors = []
        for host, port in address.uris:
            sock = t.TSocket.TSocket(host, port)
            sock.setTimeout(address.timeout_s * 1000)
            transport = t.TTransport.TBufferedTransport(sock)
            try:
                transport.open()
            except (t.TTransport.TTransportException, OSError) as exc:
                errors.append(f"thrift://{host}:{port}: {exc}")
                continue
            self.transport = transport
            self.client = t.ThriftHiveMetastore.Client(t.TBinaryProtocol.TBinaryProtocol(transport))
            return
        raise CatalogUnreachableError(
            f"cannot reach the Hive Metastore at {address.text()} ({'; '.join(errors)}): check that the metastore runs "
            f"and that option {URI!r} names its host and Thrift port"
        )

    def close(self) -> None:
        with contextlib.suppress(Exception):  # closing a broken socket
            self.transport.close()


class MetastoreClient:
    """A pool of Thrift connections to one metastore, ``client-pool-size`` per process.

    ``call("get_table_req", request)`` runs one call on a pooled connection; a connection that
    broke (the metastore restarted) is dropped and the call retried once on a new one. The
    metastore's own exceptions (``NoSuchObjectException``, ``AlreadyExistsException``, ...) are
    raised as they are, for the caller to translate; transport failures raise
    ``CatalogUnreachableError`` and ``MetaException`` ``HiveMetastoreError``.
    """

    def __init__(self, address: MetastoreAddress) -> None:
        ttypes()
        self.address = address
        self._pid = os.getpid()
        self._idle: queue.LifoQueue[_Connection] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(address.pool_size)

    def __getstate__(self) -> dict:
        return {"address": self.address}

    def __setstate__(self, state: dict) -> None:
        type(self).__init__(self, state["address"])

    def __repr__(self) -> str:
        return f"MetastoreClient({self.address.text()!r})"

    def _checkout(self) -> _Connection:
        if self._pid != os.getpid():  # forked: never reuse the parent's sockets
            type(self).__init__(self, self.address)
        self._slots.acquire()
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        try:
            return _Connection(self.address)
        except BaseException:
            self._slots.release()
            raise

    def _checkin(self, conn: _Connection, *, broken: bool) -> None:
        if broken:
            conn.close()
        else:
            self._idle.put(conn)
        self._slots.release()

    def call(self, method: str, *args: Any) -> Any:
        """``ThriftHiveMetastore.Client.<method>(*args)`` on a pooled connection.

        Raises:
            CatalogUnreachableError: no metastore answers (twice, with a fresh connection).
            HiveMetastoreError: the metastore answered with a ``MetaException``.
            MissingDriverError: the client packages are not installed.
        """
        return self.run(lambda client: getattr(client, method)(*args), what=method)

    def run(self, fn: Callable[[Any], T], *, what: str = "a call") -> T:
        """``fn(client)`` on a pooled connection (retried once on a fresh connection when the
        transport broke). The metastore's exceptions pass through (Thrift exceptions are
        immutable: no context manager may re-raise them), ``MetaException`` as
        ``HiveMetastoreError``."""
        t = _thrift()
        for attempt in (1, 2):
            conn = self._checkout()
            try:
                result = fn(conn.client)
            except (t.TTransport.TTransportException, OSError, EOFError) as exc:
                self._checkin(conn, broken=True)
                if attempt == 2:
                    raise CatalogUnreachableError(
                        f"the Hive Metastore at {self.address.text()} stopped answering during {what}: {exc}"
                    ) from exc
                continue
            except t.ttypes.MetaException as exc:
                self._checkin(conn, broken=False)
                raise HiveMetastoreError(f"the Hive Metastore refused {what}: {exc.message}") from exc
            except t.ttypes.TException:
                self._checkin(conn, broken=False)
                raise
            except BaseException:
                self._checkin(conn, broken=True)
                raise
            self._checkin(conn, broken=False)
            return result
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Close this process's idle connections."""
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return
