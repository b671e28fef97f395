"""Every dataset table, defined once.

Each field has its Arrow type, nullability and a one-line description; the
``pa.schema`` of a table is derived from these definitions, with the
description in the field metadata and the schema version in the schema
metadata. ``docs/datasets.md`` is checked against this module by a test.

``job_id`` is not a column in the files: it is the hive partition key
(``<table>/job_id=<id>/part-*.parquet``) that readers add back.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from schemas.pickling import by_fields

#: major.minor. A reader refuses files whose major is newer than its own.
# 1.1: conformance.source, .w3c; 1.2: incremental crawl state; 1.3: the workers table; 1.4: WARC locations;
# 1.5: survey breadth (feeds.generator ... platforms, items.title_has_markup ... content_kind; null in older files);
# 1.6: items.date_form not-tried (dates past a document's share of dateparser: pipelines/document/dates.py);
# 1.7: discovered_via archive-link (a live fetch of a feed link an archived page advertises: commoncrawl --live);
# 1.8: fetch_log.waited_for, outcome deferred (a host's pause: crawler/middlewares/hostpause.py);
# 1.9: items, element_usage, conformance, pages and links .archived (an archived copy's rows beside a live fetch's).
SCHEMA_VERSION = "1.9"
#: Key of the schema version in each file's key-value metadata.
VERSION_KEY = b"feedcensus.schema_version"
#: Name of the hive partition column every table is split by.
PARTITION_KEY = "job_id"

TIMESTAMP = pa.timestamp("us", tz="UTC")
STRINGS = pa.list_(pa.string())
INTS = pa.list_(pa.int32())


@dataclass(frozen=True)
class Field:
    name: str
    type: pa.DataType
    nullable: bool
    description: str

    def arrow(self) -> pa.Field[pa.DataType]:
        return pa.field(
            self.name, self.type, nullable=self.nullable, metadata={b"description": self.description.encode()}
        )


def _f(name: str, type_: pa.DataType, description: str, *, nullable: bool = True) -> Field:
    return Field(name, type_, nullable, description)


#: Where a response is archived (crawl --warc, or a replay): in ``feeds`` and ``fetch_log`` alike.
WARC_FIELDS: tuple[Field, ...] = (
    _f(
        "warc_filename",
        pa.string(),
        "The WARC file holding this response's record: its name (crawl --warc, replay) or the path the archive "
        "index gives (commoncrawl); null when not archived.",
    ),
    _f("warc_record_offset", pa.int64(), "Byte offset of the response record (one gzip member) in warc_filename."),
    _f("warc_record_length", pa.int64(), "Length in bytes of the response record's gzip member."),
)

#: Which copy of a feed a row of ``items``, ``element_usage`` or ``conformance`` is of (commoncrawl --live keeps both).
FEED_COPY = _f(
    "archived",
    pa.bool_(),
    "True when the row is of a web archive's copy of the feed (its feeds row's discovered_via is archive: "
    "feedcensus commoncrawl), false when of a fetch; join feeds on url = feed_url and "
    "(discovered_via = 'archive') = archived. Null before schema 1.9 (those files cannot tell the two copies apart).",
)
#: Which copy of a page a row of ``pages`` or ``links`` is of.
PAGE_COPY = _f(
    "archived",
    pa.bool_(),
    "True when the row is of a web archive's copy of the page (its fetch_log row's discovered_via is archive: "
    "feedcensus commoncrawl), false when of a fetch. Null before schema 1.9.",
)

FEEDS: tuple[Field, ...] = (
    _f("url", pa.string(), "The URL as requested.", nullable=False),
    _f("final_url", pa.string(), "The URL the document came from, after redirects."),
    _f("status", pa.int32(), "HTTP status of the final response."),
    _f("content_type", pa.string(), "The raw Content-Type header."),
    _f(
        "content_type_ok",
        pa.bool_(),
        "USM: served with a feed media type (application/rss+xml, application/atom+xml, application/rdf+xml).",
    ),
    _f("format", pa.string(), "rss, rdf, atom or unknown, recognised from the content.", nullable=False),
    _f("version", pa.string(), "Format version: 0.91, 0.92, 2.0, '' (version-less rss), 1.0, 0.90, atom 1.0 or 0.3."),
    _f(
        "well_formed",
        pa.bool_(),
        "Whether the document is well-formed XML (otherwise parsed in recover mode).",
        nullable=False,
    ),
    _f("parse_error", pa.string(), "First XML error, or why the document is not a feed."),
    _f("encoding", pa.string(), "Character encoding the document was decoded with."),
    _f("item_count", pa.int32(), "Number of items or entries.", nullable=False),
    _f("title", pa.string(), "Channel / feed title."),
    _f("link", pa.string(), "Channel link (the site the feed belongs to), absolute."),
    _f("language", pa.string(), "Channel language (language, dc:language or xml:lang)."),
    _f("self_url", pa.string(), "atom:link rel=self href (or Atom 0.3 rel=start), absolute."),
    _f("self_url_matches", pa.bool_(), "Whether self_url equals the URL fetched (after redirects)."),
    _f(
        "reflexive",
        pa.string(),
        "Reflexive autodiscovery: advertises, does_not_advertise, page_unreachable, no_link, or null when not checked.",
    ),
    _f(
        "discovered_via",
        pa.string(),
        "How the feed was found: url, seed, opml (an xmlUrl), autodiscovery, guess, archive (an archived feed: an "
        "archive index names its record), archive-link (fetched live: a feed link an archived page advertises).",
        nullable=False,
    ),
    _f("source", pa.string(), "The input or page that led to this feed."),
    _f("bytes", pa.int64(), "Size of the body in bytes (after content decoding).", nullable=False),
    _f("errors", pa.int32(), "Number of profile rules failed at severity error."),
    _f("warnings", pa.int32(), "Number of profile rules failed at severity warning."),
    _f("etag", pa.string(), "ETag response header, for conditional re-crawls."),
    _f("last_modified", pa.string(), "Last-Modified response header, for conditional re-crawls."),
    _f(
        "fetched_at",
        TIMESTAMP,
        "When the response was received (for a feed not due: when it last was).",
        nullable=False,
    ),
    _f(
        "changed",
        pa.bool_(),
        "False when the feed answered 304 Not Modified, its body hashed the same as at its previous fetch, or it "
        "was not due: the row then carries forward the document facts of the parse in parsed_job. True otherwise "
        "(a first fetch included). Null before schema 1.2.",
    ),
    _f("parsed_job", pa.string(), "The job whose parse the document facts come from (this job when changed)."),
    _f("content_hash", pa.string(), "SHA-256 (hex) of the body as received, after content decoding."),
    _f("new_items", pa.int32(), "Items whose identity no earlier job saw in this feed (0 when not changed)."),
    _f("changed_items", pa.int32(), "Items seen before whose content hash differs (0 when not changed)."),
    _f("ttl", pa.int32(), "RSS <ttl>: minutes the channel may be cached; null when absent or not a whole number."),
    _f("skip_hours", INTS, "RSS <skipHours>: hours (GMT, 0-23; 24 read as 0) the feed asks not to be fetched."),
    _f("skip_days", STRINGS, "RSS <skipDays>: days (Monday ... Sunday) the feed asks not to be fetched."),
    _f("update_period", pa.string(), "sy:updatePeriod: hourly, daily, weekly, monthly or yearly."),
    _f("update_frequency", pa.int32(), "sy:updateFrequency: updates per update_period (1 when absent)."),
    _f("cache_control", pa.string(), "The raw Cache-Control response header."),
    _f("expires", pa.string(), "The raw Expires response header."),
    _f(
        "generator",
        pa.string(),
        "The channel's generator: RSS generator text; Atom generator text, then its version and (uri) when given; "
        "RSS 1.0 admin:generatorAgent rdf:resource. Null when absent.",
    ),
    _f(
        "feed_date",
        TIMESTAMP,
        "The feed-level date in UTC: Atom updated (else published; Atom 0.3 modified); RSS lastBuildDate, else "
        "pubDate, else dc:date; RSS 1.0 dc:date. Null when absent or unparseable.",
    ),
    _f("hub_url", pa.string(), "href of the first channel-level Atom link with rel token hub (WebSub), absolute."),
    _f(
        "link_rels",
        STRINGS,
        "Distinct rel tokens (lower-cased, sorted) of the channel-level Atom links that have an href; a missing "
        "rel is alternate (self, hub, next, prev-archive...: RFC 5005 paging and archives).",
    ),
    _f(
        "entry_languages",
        STRINGS,
        "Distinct xml:lang values (lower-cased, sorted) on items or any element inside them, and item dc:language.",
    ),
    _f("hreflangs", STRINGS, "Distinct hreflang values (stripped, sorted) of Atom links, channel and items."),
    _f(
        "platforms",
        STRINGS,
        "Publishing platforms (sorted labels) named by the generator and the response headers: see Platform "
        "fingerprints.",
    ),
    *WARC_FIELDS,
)

ITEMS: tuple[Field, ...] = (
    _f("feed_url", pa.string(), "feeds.url of the feed the item is in.", nullable=False),
    _f("position", pa.int32(), "Position of the item in the document, from 0.", nullable=False),
    _f("guid", pa.string(), "guid (RSS), id (Atom) or rdf:about (RSS 1.0)."),
    _f("guid_is_permalink", pa.bool_(), "RSS guid isPermaLink (default true), null when no guid."),
    _f("link", pa.string(), "Item link, absolute."),
    _f("title", pa.string(), "Item title as text."),
    _f("author", pa.string(), "author, dc:creator or atom:author/name."),
    _f("categories", STRINGS, "Category terms."),
    _f("enclosure_url", pa.string(), "First enclosure URL."),
    _f("enclosure_type", pa.string(), "First enclosure MIME type."),
    _f("enclosure_length", pa.int64(), "First enclosure length in bytes, when an integer."),
    _f("pub_date_raw", pa.string(), "The date as written (pubDate, dc:date, published, updated...)."),
    _f("pub_date", TIMESTAMP, "The date parsed, in UTC; null when it cannot be parsed or was not tried (date_form)."),
    _f(
        "date_form",
        pa.string(),
        "Form of the raw date: rfc822-universal, rfc822-other-zone, rfc822-2digit-year, iso8601, other-parsed, "
        "unparsed, not-tried (the document had used up its share of the slow last-resort parser).",
    ),
    _f(
        "identity",
        pa.string(),
        "What makes the item the same item in later fetches: the guid, else the link, else "
        "'sha256:' + a hash of title, description and enclosure URL.",
    ),
    _f("identity_source", pa.string(), "What identity was taken from: guid, link or hash."),
    _f("content_hash", pa.string(), "SHA-256 (hex) of title, link, description/content and enclosure URL."),
    _f("first_seen_job", pa.string(), "The first job in the dataset whose fetch of this feed had this item."),
    _f("is_new", pa.bool_(), "Whether no earlier job saw this item in this feed."),
    _f("is_changed", pa.bool_(), "Seen before, but with a different content_hash."),
    _f(
        "title_has_markup",
        pa.bool_(),
        "The title as written holds HTML markup: a tag in its text (RSS, Atom type html) or inside its div (Atom "
        "xhtml). Null when no title.",
    ),
    _f(
        "description_length",
        pa.int32(),
        "Characters of the description (RSS description, Atom summary) as written, escaped markup included; "
        "null when absent.",
    ),
    _f(
        "content_length",
        pa.int32(),
        "Characters of the full content (content:encoded, Atom content); null when absent.",
    ),
    _f(
        "content_kind",
        pa.string(),
        "Kind of the main body (content, else description): html, xhtml or plain; null when the item has neither.",
    ),
    FEED_COPY,
)

ELEMENT_USAGE: tuple[Field, ...] = (
    _f("feed_url", pa.string(), "feeds.url of the feed.", nullable=False),
    _f(
        "scope",
        pa.string(),
        "channel, item, rss (RSS only: elements directly under `<rss>` beside the channel, such as `<meta>`; "
        "their children are at `rss/<name>`), or the parent element for deeper levels (image, textInput, skipHours...).",
        nullable=False,
    ),
    _f(
        "element",
        pa.string(),
        "Element name (prefix:local from the fixed table, {uri}local otherwise), or element@attribute.",
        nullable=False,
    ),
    _f("count", pa.int32(), "Occurrences in the feed at this scope.", nullable=False),
    _f("items_with", pa.int32(), "For scope item: how many items have it; null otherwise."),
    _f(
        "defined",
        pa.bool_(),
        "False for un-namespaced names the format's spec does not define (pubdate, date, content...).",
    ),
    FEED_COPY,
)

LINKS: tuple[Field, ...] = (
    _f("page_url", pa.string(), "The page the link is on (after redirects).", nullable=False),
    _f("href", pa.string(), "The link target, resolved to an absolute URL."),
    _f("href_raw", pa.string(), "The href as written."),
    _f("rel", pa.string(), "The rel attribute as written."),
    _f("type", pa.string(), "The type attribute as written."),
    _f("title", pa.string(), "The title attribute."),
    _f("position", pa.int32(), "Order of the feed link on the page, from 0.", nullable=False),
    _f("in_head", pa.bool_(), "Whether the link is in the document head.", nullable=False),
    _f("conforms_rss", pa.bool_(), "Meets every MUST of the RSS Board autodiscovery spec.", nullable=False),
    _f(
        "conforms_atom",
        pa.bool_(),
        "Meets every MUST of the Atom autodiscovery draft (false for an RSS or RDF link, which the draft does not judge).",
        nullable=False,
    ),
    _f("reasons", STRINGS, "Ids of the rules the link fails.", nullable=False),
    _f("followed", pa.bool_(), "Whether the crawl requested the href.", nullable=False),
    PAGE_COPY,
)

PAGES: tuple[Field, ...] = (
    _f("page_url", pa.string(), "The page, after redirects (links.page_url of its feed links).", nullable=False),
    _f("url", pa.string(), "The URL as requested (fetch_log.url of the page's row).", nullable=False),
    _f("site", pa.string(), "Registrable domain of page_url's host, as fetch_log.site."),
    _f("html_lang", pa.string(), "The `<html>` lang attribute (else xml:lang) as written, stripped; '' when empty."),
    _f("meta_generator", pa.string(), "The first non-empty `<meta name=generator>` content, stripped."),
    _f(
        "platforms",
        STRINGS,
        "Publishing platforms named by the page's generator metas, markers in its first 32 KB and its response "
        "headers (sorted labels of the platform table).",
        nullable=False,
    ),
    _f(
        "hreflangs",
        STRINGS,
        "Distinct hreflang values of `<link rel=alternate>` in the head, stripped, sorted.",
        nullable=False,
    ),
    _f("feed_links", pa.int32(), "Number of feed links on the page (its rows in links).", nullable=False),
    _f(
        "rel_alternate",
        pa.bool_(),
        "A `<link>` with a feed media type has the rel token alternate (exactly when feed_links > 0).",
        nullable=False,
    ),
    _f(
        "rel_feed",
        pa.bool_(),
        "A `<link>` with a feed media type has the rel token feed (with or without alternate; rel=feed alone "
        "makes no feed link).",
        nullable=False,
    ),
    _f("fetched_at", TIMESTAMP, "When the page was received (its fetch_log row's fetched_at).", nullable=False),
    PAGE_COPY,
)

CONFORMANCE: tuple[Field, ...] = (
    _f("feed_url", pa.string(), "feeds.url of the feed.", nullable=False),
    _f("rule", pa.string(), "Stable rule id (see `feedcensus rules`).", nullable=False),
    _f("severity", pa.string(), "error (a MUST) or warning (a SHOULD).", nullable=False),
    _f("scope", pa.string(), "channel, item, or a nested element.", nullable=False),
    _f("count", pa.int32(), "How many times the rule failed in the feed.", nullable=False),
    _f("example", pa.string(), "The first offending value or element, shortened."),
    _f(
        "source",
        pa.string(),
        "Where the rule comes from: profile (the RSS Best Practices Profile), rss2 (the RSS 2.0 specification "
        "alone), namespace (a namespace's own specification, as the W3C Feed Validator reads it), rss1 (the "
        "RSS 1.0 specification, for RSS 1.0 feeds) or atom (Atom 1.0, RFC 4287, for Atom feeds). Null in files written before schema 1.1 (all profile rules "
        "then).",
    ),
    _f(
        "w3c",
        STRINGS,
        "Every W3C Feed Validator message the rule corresponds to (empty when none). Null before schema 1.1.",
    ),
    FEED_COPY,
)

FETCH_LOG: tuple[Field, ...] = (
    _f("url", pa.string(), "The URL given or requested.", nullable=False),
    _f("final_url", pa.string(), "URL of the final response, after redirects."),
    _f("status", pa.int32(), "HTTP status, null when no response."),
    _f(
        "outcome",
        pa.string(),
        "feed, page, opml, robots (a robots.txt fetch), not_modified (a 304 to a conditional GET), not_feed, http_error, network_error, timeout, too_large, redirect_loop, refused, robots_denied, not_archived (a replay: the archives hold no response for it; commoncrawl --sites: the index holds no page of a listed site, url is http://<domain>/), parse_error (a feed or HTML page whose document worker died while reading it: no other rows), parse_timeout (a feed or HTML page whose reading ran past `FEEDCENSUS_PARSE_TIMEOUT`: no other rows), not_due (a known feed not due yet), deferred (not fetched: its host asked, with Retry-After, to be left alone for longer than `FEEDCENSUS_HOST_PAUSE_MAX`; error says until when), duplicate, invalid_url, unsupported_scheme, input_error.",
        nullable=False,
    ),
    _f("error", pa.string(), "One-line reason when the outcome is not a success."),
    _f("source", pa.string(), "The input file or page that led to this URL."),
    _f(
        "discovered_via",
        pa.string(),
        "How the URL was found: url, seed, opml (an xmlUrl), opml-page (an htmlUrl), include (an OPML include), autodiscovery, reflexive, guess, robots, archive (an archived page or feed: a record an archive index names, feedcensus commoncrawl), "
        "archive-link (a live fetch of a feed link an archived page advertises: commoncrawl --live).",
    ),
    _f("depth", pa.int32(), "Hops from the input (0 for inputs)."),
    _f(
        "waited_for",
        pa.string(),
        "Why the request waited before it was sent: its host had asked the crawl to slow down (a 429 or 503, "
        "its Retry-After or a back-off), e.g. 'example.org asked to slow down: 429 with Retry-After 20'; null "
        "when it did not wait for a pause.",
    ),
    _f("content_type", pa.string(), "The raw Content-Type header."),
    _f("bytes", pa.int64(), "Size of the body received."),
    _f("fetched_at", TIMESTAMP, "When the outcome was recorded.", nullable=False),
    _f("retry_after", pa.string(), "The raw Retry-After header of a 429 or 503 response."),
    _f(
        "next_due",
        TIMESTAMP,
        "For a feed (fetched, not modified, not due, or refused with 429/503): when the schedule next lets it be "
        "fetched (docs/scheduling.md).",
    ),
    _f(
        "due_hint",
        pa.string(),
        "What decided next_due: first-fetch, ignore-hints, ttl, sy, max-age, expires, retry-after, skip, adaptive, "
        "min-interval, max-interval.",
    ),
    _f("due_reason", pa.string(), "next_due's reasoning in words, e.g. 'ttl 60 min, then skipHours 0-5'."),
    *WARC_FIELDS,
    _f("server", pa.string(), "The raw Server response header; null without a response."),
    _f("x_powered_by", pa.string(), "The raw X-Powered-By response header; null without a response."),
    _f("content_language", pa.string(), "The raw Content-Language response header; null without a response."),
    _f(
        "site",
        pa.string(),
        "Registrable domain of url's host by the Public Suffix List, private suffixes included (x.blogspot.com); "
        "an IP address or one-label host is its own site; ASCII (punycode) form; null when url has no host.",
    ),
)

WORKERS: tuple[Field, ...] = (
    _f(
        "worker",
        pa.string(),
        "The process: host:pid:token (one row per process that took part in the job).",
        nullable=False,
    ),
    _f("host", pa.string(), "Host name of the machine it ran on."),
    _f("pid", pa.int32(), "Its process id."),
    _f("frontier", pa.string(), "The shared frontier it worked from (a Redis URL without credentials); null alone."),
    _f("started_at", TIMESTAMP, "When it opened.", nullable=False),
    _f("finished_at", TIMESTAMP, "When it closed.", nullable=False),
    _f(
        "finish_reason",
        pa.string(),
        "Why it closed: finished, shutdown (interrupted), frontier_error, dataset_error...",
    ),
    _f("requests", pa.int64(), "Requests it sent."),
    _f("responses", pa.int64(), "Responses it received."),
    _f("feeds", pa.int64(), "Feed documents it recorded (fetch_log outcome feed)."),
    _f("items", pa.int64(), "Items it parsed."),
    _f("errors", pa.int64(), "fetch_log rows it wrote with a failure outcome."),
    _f("requeued", pa.int64(), "Requests of dead workers it put back into the frontier."),
)

TABLES: dict[str, tuple[Field, ...]] = {
    "feeds": FEEDS,
    "items": ITEMS,
    "element_usage": ELEMENT_USAGE,
    "links": LINKS,
    "pages": PAGES,
    "conformance": CONFORMANCE,
    "fetch_log": FETCH_LOG,
    "workers": WORKERS,
}


@functools.cache
def arrow_schema(table: str) -> pa.Schema:
    """The Arrow schema of ``table``, with descriptions and the schema version."""
    return pa.schema([f.arrow() for f in TABLES[table]], metadata={VERSION_KEY: SCHEMA_VERSION.encode()})


@by_fields
@dataclass(frozen=True, slots=True)
class Encoded:
    """Rows of one table built into an Arrow record batch and serialized (an Arrow IPC message).

    A document worker sends the tables the crawling process only writes (items, element_usage,
    conformance) this way: the rows become Arrow once, in the worker, and the crawling process
    passes the bytes on to the dataset writer instead of unpickling and converting dicts.
    """

    num_rows: int
    data: bytes
    #: :func:`schema_digest` of the schema the batch was built with (the schema itself does not travel).
    schema: str


@functools.cache
def schema_digest(table: str) -> str:
    """A short digest of ``table``'s Arrow schema, to tell a batch built by other code."""
    return hashlib.sha256(arrow_schema(table).serialize().to_pybytes()).hexdigest()[:16]


@functools.cache
def _row_type(table: str) -> pa.StructType:
    """``table``'s columns as one struct type: a row dict converts to it in one step."""
    return pa.struct(list(arrow_schema(table)))


def encode_rows(table: str, rows: list[dict[str, Any]]) -> Encoded:
    """``rows`` (dicts keyed by column name) as one record batch of ``table``'s schema, serialized.

    The same batch as ``RecordBatch.from_pylist``, built as one struct array: one conversion call for
    the rows instead of one per column, which is faster for a feed's few rows. For a commit's thousands
    of rows ``from_pylist`` is the faster one, so the dataset writer keeps it
    (pipelines/dataset/commits.py, ``arrow_table``; the figures: benchmarks/RESULTS.md, section 11).
    """
    rows_array: pa.StructArray = pa.array(rows, type=_row_type(table))  # type: ignore[assignment]  # a struct type gives a StructArray
    batch = pa.RecordBatch.from_struct_array(rows_array)  # serialized without its schema: decode_rows gives it
    return Encoded(batch.num_rows, batch.serialize().to_pybytes(), schema_digest(table))


def decode_rows(table: str, encoded: Encoded) -> pa.RecordBatch:
    """The record batch :func:`encode_rows` made. ValueError when it was built with another schema of
    ``table`` (a worker that imported other code than the crawl's: the package changed under a crawl)."""
    if encoded.schema != schema_digest(table):
        raise ValueError(f"{table} rows were built with another schema than this code's ({encoded.schema})")
    return pa.ipc.read_record_batch(pa.py_buffer(encoded.data), arrow_schema(table))


class SchemaVersionError(ValueError):
    """A dataset was written by a newer, incompatible schema."""


def check_version(metadata: dict[bytes, bytes] | None, where: str = "") -> str:
    """Return the schema version in ``metadata``; raise if its major is newer than ours."""
    raw = (metadata or {}).get(VERSION_KEY)
    if raw is None:
        raise SchemaVersionError(f"{where or 'file'}: no {VERSION_KEY.decode()} in metadata, not a feedcensus dataset")
    version = raw.decode()
    if int(version.split(".")[0]) > int(SCHEMA_VERSION.split(".")[0]):
        raise SchemaVersionError(
            f"{where or 'file'}: schema version {version} is newer than this feedcensus reads ({SCHEMA_VERSION}); upgrade feedcensus"
        )
    return version
