"""WARC 1.1 capture: each HTTP exchange of a crawl as a response record and a request record.

Pure: plain data in (:class:`Exchange`), gzip'd WARC files out, written with warcio. Each record
is its own gzip member, so a record can be read alone from its offset (what Common Crawl's index
and ``feeds.warc_record_offset`` point at) and a file cut short by a crash is readable up to its
last whole record. Files are rotated once they pass ``max_bytes``; each starts with a ``warcinfo``
record naming the job and the software, and ends with a ``metadata`` record (:data:`CLOSING_URI`), so
that a file cut between two records can be told from a whole one.

What is "as received": the status line, the headers and the body before Scrapy decodes
``Content-Encoding`` (the downloader middleware sits next to the downloader). Two things differ
from the bytes on the wire: Scrapy has already undone ``Transfer-Encoding: chunked`` (the header
is left out of the record, since its body is no longer chunked), and header names are as Scrapy
normalises them (``Content-Type``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import threading
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from pathlib import Path
from typing import Any, Final, Protocol
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

#: The WARC version written.
WARC_VERSION: Final = "1.1"
#: zlib level of each record's gzip member (warcio's own is 9: several times slower, ~3 % smaller).
GZIP_LEVEL: Final = 6
#: Default size after which a file is closed and the next one started (the usual 1 GB of crawlers).
DEFAULT_MAX_BYTES: Final = 1_000_000_000
#: The request record's field holding the census's fetch context as JSON (``FetchContext.to_json``):
#: how the URL was found, from where, how deep. ``feedcensus replay`` takes its inputs from it.
CONTEXT_FIELD: Final = "Feedcensus-Context"
#: The request record's field naming the URL first requested, on a request a redirect made.
REDIRECTED_FROM_FIELD: Final = "Feedcensus-Redirected-From"
#: The ``warcinfo`` field by which a file promises to end with its closing record (:data:`CLOSING_URI`).
CLOSING_FIELD: Final = "feedcensus-closing-record"
#: The target URI of the ``metadata`` record that closes a file: a file that promised one and lacks it was
#: cut short after its last whole record (a crash, a copy interrupted), which nothing else would show.
CLOSING_URI: Final = "urn:feedcensus:closing-record"
#: The ``warcinfo`` field holding, as one JSON object, the values the crawl ran with of the settings that
#: change what it requests (:data:`REQUEST_SETTINGS`): ``feedcensus replay`` runs with the same ones.
SETTINGS_FIELD: Final = "feedcensus-settings"
#: The settings that change which URLs a crawl requests, or what becomes of a response (a retry, a
#: redirect followed, a size refused), each with the kind of its value. The flags of ``crawl`` set the
#: first ones (--no-reflexive, --no-pages, --guess, --head-only, --allow-private-networks, --refetch,
#: --ignore-hints, --min-interval, --max-interval).
REQUEST_SETTINGS: Final[dict[str, str]] = {
    "FEEDCENSUS_REFLEXIVE": "bool",
    "FEEDCENSUS_OPML_PAGES": "bool",
    "FEEDCENSUS_GUESS": "bool",
    "FEEDCENSUS_FOLLOW_BODY_LINKS": "bool",
    "FEEDCENSUS_ALLOW_PRIVATE_NETWORKS": "bool",
    "FEEDCENSUS_CONDITIONAL": "bool",
    "FEEDCENSUS_IGNORE_HINTS": "bool",
    "FEEDCENSUS_MIN_INTERVAL": "float",
    "FEEDCENSUS_MAX_INTERVAL": "float",
    "FEEDCENSUS_INCREMENTAL": "bool",
    "FEEDCENSUS_FOLLOW_LINKS": "bool",
    "FEEDCENSUS_OPML_MAX_INCLUDE_DEPTH": "int",
    "FEEDCENSUS_MAX_URL_LENGTH": "int",
    "AUTODISCOVERY_ENABLED": "bool",
    "ROBOTSTXT_OBEY": "bool",
    "DOWNLOAD_MAXSIZE": "int",
    "REDIRECT_ENABLED": "bool",
    "REDIRECT_MAX_TIMES": "int",
    "METAREFRESH_ENABLED": "bool",
    "METAREFRESH_MAXDELAY": "int",
    "RETRY_ENABLED": "bool",
    "RETRY_TIMES": "int",
    "RETRY_HTTP_CODES": "ints",
}
#: Headers that describe the wire form of a body the record no longer has.
_WIRE_ONLY = frozenset({"transfer-encoding"})


@dataclass(frozen=True)
class Exchange:
    """One request and the response it got, as the crawler saw them."""

    url: str
    method: str
    request_headers: list[tuple[str, str]]
    status: int
    response_headers: list[tuple[str, str]]
    body: bytes
    fetched_at: datetime
    request_body: bytes = b""
    protocol: str = "HTTP/1.1"
    ip_address: str | None = None
    #: Extra fields of the request record, e.g. :data:`CONTEXT_FIELD` (WARC 1.1 section 5 allows them).
    request_fields: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Location:
    """Where a response record is: the file's name (no folder), the record's offset and length in it."""

    filename: str
    offset: int
    length: int


@dataclass
class _OpenFile:
    path: Path
    handle: io.FileIO
    size: int = 0
    records: int = 0


@dataclass
class WarcWriter:
    """Writes exchanges into rotated ``<prefix>-<job>-<time>-<serial>-<token>.warc.gz`` files in ``folder``.

    Thread-safe (one lock): the crawl may hand exchanges over from any thread.
    """

    folder: Path
    job: str
    info: Mapping[str, str] = field(default_factory=dict)
    prefix: str = "feedcensus"
    max_bytes: int = DEFAULT_MAX_BYTES
    #: Every file started, in order (names only).
    files: list[str] = field(default_factory=list)
    records: int = 0
    bytes_written: int = 0

    def __post_init__(self) -> None:
        self.folder = Path(self.folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._builder = WARCWriter(None, gzip=False, warc_version=WARC_VERSION)
        self._token = secrets.token_hex(3)
        self._lock = threading.Lock()
        self._file: _OpenFile | None = None
        self._closed = False

    def write(self, exchange: Exchange) -> Location:
        """Write the response record, then the request record (``WARC-Concurrent-To`` it); where the response is."""
        response, request = self._records(exchange)
        with self._lock:
            if self._closed:
                raise ValueError("the WARC writer is closed")
            out = self._current()
            location = Location(out.path.name, out.size, self._append(out, response))
            self._append(out, request)
            return location

    def close(self) -> list[str]:
        """Close the open file; the names of every file written."""
        with self._lock:
            self._closed = True
            self._close_file()
            return list(self.files)

    # --- records ------------------------------------------------------------------------------

    def _records(self, exchange: Exchange) -> tuple[Any, Any]:
        build = self._builder
        date = format_warc_date(exchange.fetched_at)
        response_fields = {"WARC-Date": date}
        if exchange.ip_address:
            response_fields["WARC-IP-Address"] = exchange.ip_address
        response = build.create_warc_record(
            exchange.url,
            "response",
            payload=io.BytesIO(exchange.body),
            length=len(exchange.body),
            warc_headers_dict=response_fields,
            http_headers=StatusAndHeaders(
                status_line(exchange.status),
                [(k, v) for k, v in exchange.response_headers if k.lower() not in _WIRE_ONLY],
                protocol=exchange.protocol,
            ),
        )
        request_fields = {
            **exchange.request_fields,
            "WARC-Date": date,
            "WARC-Concurrent-To": response.rec_headers.get_header("WARC-Record-ID"),
        }
        request = build.create_warc_record(
            exchange.url,
            "request",
            payload=io.BytesIO(exchange.request_body),
            length=len(exchange.request_body),
            warc_headers_dict=request_fields,
            http_headers=StatusAndHeaders(
                f"{exchange.method} {request_target(exchange.url)} {exchange.protocol}",
                exchange.request_headers,
                is_http_request=True,
            ),
        )
        return response, request

    def _warcinfo(self, filename: str) -> Any:
        fields = {
            "software": self.info.get("software", "feedcensus"),
            "format": "WARC File Format 1.1",
            "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
            "isPartOf": self.job,
            "hostname": os.uname().nodename,
            CLOSING_FIELD: "yes",
            **{k: v for k, v in self.info.items() if k != "software"},
        }
        return self._builder.create_warcinfo_record(filename, fields)

    # --- files ---------------------------------------------------------------------------------

    def _current(self) -> _OpenFile:
        if self._file is not None and self._file.size >= self.max_bytes:
            self._close_file()
        if self._file is None:
            self._file = self._open_file()
        return self._file

    def _open_file(self) -> _OpenFile:
        stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S%f")[:17]
        name = f"{self.prefix}-{safe_name(self.job)}-{stamp}-{len(self.files):05d}-{self._token}.warc.gz"
        path = self.folder / name
        # Unbuffered: a record is on disk once _append returns, and a failed one can be cut off (_append).
        out = _OpenFile(path, open(path, "xb", buffering=0))  # noqa: SIM115  # closed by _close_file
        self.files.append(name)
        self._append(out, self._warcinfo(name))
        return out

    def _close_file(self) -> None:
        """Close the open file with its closing record (when that cannot be written, a replay says the file
        was cut short, which it then is as far as anyone can tell)."""
        if self._file is None:
            return
        out, self._file = self._file, None
        with contextlib.suppress(OSError):
            self._append(out, self._closing(out.records))
        out.handle.close()

    def _closing(self, records: int) -> Any:
        block = f"records: {records}\r\n".encode()
        return self._builder.create_warc_record(
            CLOSING_URI,
            "metadata",
            payload=io.BytesIO(block),
            length=len(block),
            warc_content_type="application/warc-fields",
        )

    def _append(self, out: _OpenFile, record: Any) -> int:
        """Write one record as its own gzip member; its length in the file."""
        raw = io.BytesIO()
        self._builder._write_warc_record(raw, record)  # warcio's serialiser (gzip=False: we compress)
        compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, zlib.MAX_WBITS + 16)
        member = compressor.compress(raw.getvalue()) + compressor.flush()
        try:
            _write_all(out.handle, member)
        except OSError:
            # A full disk or a file size limit: what part of the record got written is cut off again, so
            # the file ends on its last whole record (a reader meeting a cut one may fail on it).
            with contextlib.suppress(OSError):
                os.ftruncate(out.handle.fileno(), out.size)
                out.handle.seek(out.size)
            raise
        out.size += len(member)
        out.records += 1
        self.records += 1
        self.bytes_written += len(member)
        return len(member)


def _write_all(handle: io.FileIO, data: bytes) -> None:
    """Write all of ``data`` to an unbuffered file (one write may take only part of it)."""
    view = memoryview(data)
    while view:
        written = handle.write(view)
        if not written:
            raise OSError("the WARC file took no more bytes")
        view = view[written:]


def format_warc_date(when: datetime) -> str:
    """WARC 1.1's WARC-Date: UTC, ISO 8601 with microseconds."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def status_line(status: int) -> str:
    """``200 OK``: the code and its standard reason phrase (Scrapy keeps no reason phrase)."""
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"{status} Unknown"


def request_target(url: str) -> str:
    """The request line's target: path and query (origin form, RFC 9112 section 3.2.1)."""
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def safe_name(text: str) -> str:
    """``text`` usable in a file name: letters, digits, ``.``, ``_`` and ``-`` kept, the rest ``_``."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text) or "job"


def header_pairs(headers: Iterable[tuple[bytes, Iterable[bytes]]]) -> list[tuple[str, str]]:
    """Scrapy's headers (name -> values, bytes) as (name, value) text pairs, one per value (latin-1, as HTTP is)."""
    return [(name.decode("latin-1"), value.decode("latin-1")) for name, values in headers for value in values]


class SettingsSource(Protocol):
    """What :func:`request_settings` reads: Scrapy's settings' typed getters (no Scrapy import here)."""

    def getbool(self, name: str, default: bool = False) -> bool: ...
    def getint(self, name: str, default: int = 0) -> int: ...
    def getfloat(self, name: str, default: float = 0.0) -> float: ...
    def getlist(self, name: str, default: list[Any] | None = None) -> list[Any]: ...


def request_settings(settings: SettingsSource) -> dict[str, Any]:
    """The values in force of :data:`REQUEST_SETTINGS`, each of its kind (a ``-s`` value is text until read)."""
    values: dict[str, Any] = {}
    for name, kind in REQUEST_SETTINGS.items():
        if kind == "bool":
            values[name] = settings.getbool(name)
        elif kind == "int":
            values[name] = settings.getint(name)
        elif kind == "float":
            values[name] = settings.getfloat(name)
        else:
            values[name] = [int(v) for v in settings.getlist(name)]
    return values


def settings_field(values: Mapping[str, Any]) -> str:
    """:data:`SETTINGS_FIELD`'s value: one line of JSON, names sorted."""
    return json.dumps(dict(values), sort_keys=True, separators=(",", ":"))


def recorded_settings(info: Mapping[str, str]) -> dict[str, Any] | None:
    """The request settings a ``warcinfo`` record names (only those of :data:`REQUEST_SETTINGS`, of the right
    kind); None when it names none (an archive written before they were recorded, or not by feedcensus)."""
    try:
        parsed = json.loads(info[SETTINGS_FIELD])
    except (KeyError, ValueError):
        return None
    if not isinstance(parsed, dict):
        return None
    kinds: dict[str, Callable[[Any], bool]] = {
        "bool": lambda v: isinstance(v, bool),
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "float": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "ints": lambda v: isinstance(v, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in v),
    }
    return {
        name: value
        for name, value in parsed.items()
        if name in REQUEST_SETTINGS and kinds[REQUEST_SETTINGS[name]](value)
    } or None
