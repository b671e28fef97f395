"""Reading WARC files back: the index a replay serves from, and the one record it serves.

Pure: paths in, plain data out, read with fastwarc (measured against warcio on a captured crawl:
``benchmarks/bench_archive.py``; it is several times faster and reports a corrupt file as an
``OSError`` where warcio prints to stdout and goes on).

* :func:`build_index` reads every record's WARC headers once (bodies are skipped, not parsed):
  where each response record is (``URL -> [Location, ...]`` in archive order: a retried URL has
  several), the server address each host had (``WARC-IP-Address``), and the request records'
  feedcensus fields (``crawler.archive.inputs`` chooses a replay's inputs from them). A file that
  is missing, unreadable or not a WARC raises :class:`ArchiveError` (one line). A file cut short
  by a crash is indexed up to its cut record, which is kept as *cut*: serving it raises
  :class:`BadRecord` (a recorded outcome, not a stopped replay).
* :class:`ArchiveReader` reads one response record at its :class:`Location` (seek, read its
  length, gunzip: each record is its own gzip member, as ``crawl --warc`` and Common Crawl write
  them) into an :class:`ArchivedResponse`: status, headers and body as stored (``Content-Encoding``
  kept: the crawler decodes it as it does live).

Limits: a WARC compressed as one gzip member (not one per record) cannot be read at an offset;
``revisit`` records (deduplicated payloads) are not served.
"""

from __future__ import annotations

import glob
import io
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from fastwarc.warc import ArchiveIterator, WarcRecordType

from crawler.archive.warc import CLOSING_FIELD, CLOSING_URI, CONTEXT_FIELD, REDIRECTED_FROM_FIELD, Location

_GZIP_MAGIC = b"\x1f\x8b"


class ArchiveError(Exception):
    """A WARC file that cannot be used at all (missing, unreadable, not a WARC): one line."""


class NotArchived(Exception):
    """The archives hold no response for a URL (or no record of its host): ``fetch_log.outcome = not_archived``."""

    def __init__(self, url: str, reason: str = "no response record in the archive") -> None:
        super().__init__(f"{reason}: {url}")
        self.url = url


class BadRecord(Exception):
    """A response record that is in the index but cannot be read (cut short, corrupt): a recorded failure."""


@dataclass(frozen=True, slots=True)
class ArchivedRequest:
    """What a request record says about why it was made (``crawl --warc``'s fields; None in a foreign WARC)."""

    url: str
    context: str | None  # the Feedcensus-Context JSON, as stored
    redirected_from: str | None


@dataclass(frozen=True, slots=True)
class ArchivedResponse:
    """One archived HTTP response, as stored."""

    url: str
    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes
    protocol: str
    ip_address: str | None
    location: Location
    #: When the archive says it was fetched (``WARC-Date``).
    fetched_at: datetime | None = None


@dataclass
class ArchiveIndex:
    """What a replay serves from: built once, read-only afterwards (so it is shared, never copied)."""

    #: Every file, by name (a record's :class:`Location` names its file without the folder), in order.
    files: dict[str, Path] = field(default_factory=dict)
    #: URL -> its response records, in archive order.
    responses: dict[str, list[Location]] = field(default_factory=dict)
    #: Response records cut short (the last record of a file a crash cut): in the index, not readable.
    cut: set[Location] = field(default_factory=set)
    #: Files that promised a closing record and end without it: cut after their last whole record.
    unclosed: list[str] = field(default_factory=list)
    #: Every host (lower case) with a response record.
    hosts: set[str] = field(default_factory=set)
    #: Host -> the server address its first response came from (``WARC-IP-Address``).
    addresses: dict[str, str] = field(default_factory=dict)
    #: Every request record, in archive order.
    requests: list[ArchivedRequest] = field(default_factory=list)
    #: The fields of the first ``warcinfo`` record (``robots: obey``, ``software``, ``isPartOf``...).
    info: dict[str, str] = field(default_factory=dict)
    records: int = 0
    #: The files' size on disk.
    bytes: int = 0

    def __deepcopy__(self, memo: dict[int, Any]) -> ArchiveIndex:
        # Scrapy deep-copies its settings, which carry the index to the download handler: one index, shared.
        return self

    @property
    def foreign(self) -> bool:
        """No request record carries a fetch context: not written by ``crawl --warc`` (Common Crawl, another crawler)."""
        return not any(r.context is not None for r in self.requests)

    def location(self, url: str, nth: int) -> Location | None:
        """The record serving the ``nth`` request (0-based) for ``url``: the records in order, then the last again."""
        found = self.responses.get(url)
        if not found:
            return None
        return found[min(nth, len(found) - 1)]


# --- finding and indexing files ---------------------------------------------------------------


def find_files(patterns: Sequence[str]) -> list[Path]:
    """The WARC files the arguments name: paths, or globs (each glob's matches sorted: names carry their time)."""
    files: list[Path] = []
    for pattern in patterns:
        if glob.has_magic(pattern):
            matches = sorted(glob.glob(pattern, recursive=True))
            if not matches:
                raise ArchiveError(f"{pattern}: no file matches")
            files.extend(Path(m) for m in matches)
        else:
            files.append(Path(pattern))
    seen: dict[str, Path] = {}
    for path in files:
        if path.is_dir():
            raise ArchiveError(f"{path}: a folder; give its files ({path}/*.warc.gz)")
        if path.name in seen and seen[path.name].resolve() != path.resolve():
            raise ArchiveError(f"{path}: two archives named {path.name} (records are located by file name)")
        seen[path.name] = path
    return list(seen.values())


def build_index(paths: Iterable[Path]) -> ArchiveIndex:
    """Index every record of ``paths``; :class:`ArchiveError` for a file that cannot be used."""
    index = ArchiveIndex()
    for path in paths:
        try:
            with path.open("rb") as fh:
                size = _index_file(fh, path.name, index)
        except OSError as exc:
            raise ArchiveError(f"{path}: {_reason(exc)}") from None
        index.files[path.name] = path
        index.bytes += size
    return index


def _reason(exc: OSError) -> str:
    if exc.strerror:
        return f"cannot read it: {exc.strerror}"
    return f"not a readable WARC file ({' '.join(str(exc).split()) or type(exc).__name__})"


def _index_file(fh: BinaryIO, name: str, index: ArchiveIndex) -> int:
    """Index one file; its size. Each record's length is where the next one starts (or the file ends)."""
    pending: tuple[int, Any] | None = None  # (offset, fields of the record before this one)
    count = 0
    promised = closed = False  # the file's warcinfo promises a closing record; it was the last record read
    for record in ArchiveIterator(fh, parse_http=False):
        offset = record.stream_pos
        if pending is not None and offset <= pending[0]:
            # Records do not move forward in the file: it is gzip'd as one stream, which cannot be read at an offset.
            raise ArchiveError(
                f"{name}: gzip'd as one stream, not one gzip member per record, so no record can be read at its "
                "offset; recompress it (warcio recompress IN OUT)"
            )
        if record.record_type == WarcRecordType.warcinfo and count == 0:
            block = record.reader.read()
            info = warcinfo_fields(block)
            index.info = index.info or info
            promised = info.get(CLOSING_FIELD) == "yes"
            complete = len(block) >= record.content_length
        else:
            complete = record.consume() >= record.content_length
        closed = record.record_type == WarcRecordType.metadata and record.headers.get("WARC-Target-URI") == CLOSING_URI
        if pending is not None:
            _add(index, name, pending[0], offset - pending[0], pending[1])
        pending = (offset, _fields(record, complete))
        count += 1
    size = fh.seek(0, io.SEEK_END)
    if pending is not None:
        offset, fields = pending
        if not _whole_member(fh, offset, size - offset):  # a crash cut the last record: its gzip member is open
            fields = (*fields[:-1], False)
        _add(index, name, offset, size - offset, fields)
    elif size:
        raise OSError(0, "", "no WARC record in it")
    if promised and not closed:
        index.unclosed.append(name)
    index.records += count
    return size


def _whole_member(fh: BinaryIO, offset: int, length: int) -> bool:
    """Whether the gzip member at ``offset`` ends within ``length`` bytes (true of an uncompressed record)."""
    fh.seek(offset)
    raw = fh.read(length)
    if raw[:2] != _GZIP_MAGIC:
        return True
    member = zlib.decompressobj(zlib.MAX_WBITS + 16)
    try:
        member.decompress(raw)
    except zlib.error:
        return False
    return member.eof


def _fields(record: Any, complete: bool) -> tuple[WarcRecordType, str, str | None, str | None, str | None, bool]:
    """What the index keeps of a record: type, URI, IP address, the two feedcensus fields, whether it is whole."""
    headers = record.headers
    return (
        record.record_type,
        headers.get("WARC-Target-URI") or "",
        headers.get("WARC-IP-Address"),
        headers.get(CONTEXT_FIELD),
        headers.get(REDIRECTED_FROM_FIELD),
        complete,
    )


def _add(index: ArchiveIndex, name: str, offset: int, length: int, fields: tuple[Any, ...]) -> None:
    kind, url, address, context, redirected_from, complete = fields
    if not url:
        return
    if kind == WarcRecordType.response:
        where = Location(name, offset, length)
        index.responses.setdefault(url, []).append(where)
        if not complete:
            index.cut.add(where)
        host = host_of(url)
        if host:
            index.hosts.add(host)
            if address and host not in index.addresses:
                index.addresses[host] = address
    elif kind == WarcRecordType.request:
        index.requests.append(ArchivedRequest(url, context, redirected_from))


def warcinfo_fields(block: bytes) -> dict[str, str]:
    """A ``warcinfo`` record's ``name: value`` lines (``application/warc-fields``)."""
    fields: dict[str, str] = {}
    for line in block.decode("utf-8", "replace").splitlines():
        name, colon, value = line.partition(":")
        if colon and name.strip():
            fields.setdefault(name.strip(), value.strip())
    return fields


def host_of(url: str) -> str | None:
    """The URL's host, lower case; None when it has none (or is not a URL)."""
    try:
        return urlsplit(url).hostname
    except ValueError:
        return None


# --- serving one record -----------------------------------------------------------------------


class ArchiveReader:
    """Reads response records at their locations; keeps one open file per archive until :meth:`close`."""

    def __init__(self, index: ArchiveIndex) -> None:
        self.index = index
        self._open: dict[str, BinaryIO] = {}

    def read(self, where: Location) -> ArchivedResponse:
        """The response at ``where``; :class:`BadRecord` when it cannot be read."""
        if where in self.index.cut:
            raise BadRecord(f"WARC record cut short at {where.filename}:{where.offset}")
        fh = self._open.get(where.filename)
        if fh is None:
            fh = self._open[where.filename] = self.index.files[where.filename].open("rb")
        try:
            fh.seek(where.offset)
            raw = fh.read(where.length)
        except OSError as exc:
            raise BadRecord(f"cannot read the WARC record at {where.filename}:{where.offset}: {exc}") from None
        return read_record(raw, where)

    def close(self) -> None:
        for fh in self._open.values():
            fh.close()
        self._open.clear()


def read_record(raw: bytes, where: Location) -> ArchivedResponse:
    """The response record ``raw`` holds (its bytes as stored at ``where``: a gzip member, or plain);
    :class:`BadRecord` when it is cut short, corrupt or not an HTTP response record."""
    at = f"{where.filename}:{where.offset}"
    if raw[:2] == _GZIP_MAGIC:
        member = zlib.decompressobj(zlib.MAX_WBITS + 16)
        try:
            data = member.decompress(raw)
        except zlib.error as exc:
            raise BadRecord(f"corrupt WARC record at {at}: {exc}") from None
        if not member.eof:
            raise BadRecord(f"WARC record cut short at {at}")
        raw = data
    try:
        record = next(iter(ArchiveIterator(io.BytesIO(raw), parse_http=False)), None)
        if record is None or record.record_type != WarcRecordType.response:
            raise BadRecord(f"no response record at {at}")
        block = record.reader.read()
    except OSError as exc:
        raise BadRecord(f"corrupt WARC record at {at}: {exc}") from None
    if len(block) < record.content_length:
        raise BadRecord(f"WARC record cut short at {at}")
    headers = record.headers
    protocol, status, fields, body = parse_http_response(block)
    return ArchivedResponse(
        url=headers.get("WARC-Target-URI") or "",
        status=status,
        headers=fields,
        body=body,
        protocol=protocol,
        ip_address=headers.get("WARC-IP-Address"),
        location=where,
        fetched_at=parse_warc_date(headers.get("WARC-Date")),
    )


def parse_warc_date(text: str | None) -> datetime | None:
    """A ``WARC-Date`` (ISO 8601, UTC, ``Z``; seconds or a fraction) as an aware datetime; None if unreadable."""
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def parse_http_response(block: bytes) -> tuple[str, int, list[tuple[bytes, bytes]], bytes]:
    """(protocol, status, header pairs, body) of an HTTP/1.x response block; :class:`BadRecord` if it is none."""
    head, sep, body = block.partition(b"\r\n\r\n")
    if not sep:
        head, sep, body = block.partition(b"\n\n")
    lines = head.replace(b"\r\n", b"\n").split(b"\n")
    parts = lines[0].split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        raise BadRecord(f"not an HTTP response: {lines[0][:80]!r}")
    headers = []
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if colon and name.strip():
            headers.append((name.strip(), value.strip()))
    return parts[0].decode("ascii"), int(parts[1]), headers, body
