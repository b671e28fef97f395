"""The names that appear in the data: one place for each vocabulary.

Every value a column of the datasets can take from a fixed list is defined
here once, as a ``StrEnum`` (so a member *is* its string: it can be written to
Parquet, compared with a literal, or used as a dict key without conversion).
The docs test checks that ``docs/datasets.md`` names every member.
"""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    """``fetch_log.outcome``: what happened to one URL given to or requested by the crawl."""

    # successes: the response was recognised by its content
    FEED = "feed"
    PAGE = "page"
    OPML = "opml"
    ROBOTS = "robots"  # a robots.txt fetch made on the crawl's behalf
    NOT_MODIFIED = "not_modified"  # a feed answered 304 to a conditional GET: nothing downloaded or parsed
    # a response that is none of the above
    NOT_FEED = "not_feed"
    # failures (see crawler/outcomes.py for what each is raised as)
    HTTP_ERROR = "http_error"
    NETWORK_ERROR = "network_error"
    TIMEOUT = "timeout"
    TOO_LARGE = "too_large"
    REDIRECT_LOOP = "redirect_loop"
    REFUSED = "refused"
    ROBOTS_DENIED = "robots_denied"
    UNSUPPORTED_SCHEME = "unsupported_scheme"
    INVALID_URL = "invalid_url"
    NOT_ARCHIVED = "not_archived"  # a replay (feedcensus replay): the archives hold no response for the URL
    # the feed was fetched but its document work was lost (a document worker died or ran out of time)
    PARSE_ERROR = "parse_error"
    PARSE_TIMEOUT = "parse_timeout"
    # bookkeeping: not fetched
    NOT_DUE = "not_due"  # a known feed its publisher's hints say is not due yet (fetch_log.next_due says when)
    DEFERRED = "deferred"  # its host asked (Retry-After) to be left alone for longer than FEEDCENSUS_HOST_PAUSE_MAX
    DUPLICATE = "duplicate"
    INPUT_ERROR = "input_error"


#: The outcomes ``crawler.outcomes.classify_exception`` can return for a failed request.
FAILURE_OUTCOMES: tuple[Outcome, ...] = (
    Outcome.HTTP_ERROR,
    Outcome.TOO_LARGE,
    Outcome.TIMEOUT,
    Outcome.REDIRECT_LOOP,
    Outcome.ROBOTS_DENIED,
    Outcome.REFUSED,
    Outcome.UNSUPPORTED_SCHEME,
    Outcome.INVALID_URL,
    Outcome.NETWORK_ERROR,
    Outcome.NOT_ARCHIVED,
)


class Via(StrEnum):
    """``discovered_via``: how the crawl came to request a URL."""

    URL = "url"  # --url
    SEED = "seed"  # a line of a seeds file
    OPML = "opml"  # an OPML outline's xmlUrl (or an --opml list itself)
    OPML_PAGE = "opml-page"  # an OPML outline's htmlUrl
    INCLUDE = "include"  # an OPML include outline
    AUTODISCOVERY = "autodiscovery"
    GUESS = "guess"
    REFLEXIVE = "reflexive"  # a feed's channel <link> page
    ROBOTS = "robots"
    ARCHIVE = "archive"  # a record a web archive's index names (feedcensus commoncrawl): an archived page or feed
    # a live fetch of a feed link an archived page advertises (feedcensus commoncrawl --sites --live)
    ARCHIVE_LINK = "archive-link"


class FeedFormat(StrEnum):
    """``feeds.format``: the family of a feed document."""

    RSS = "rss"
    ATOM = "atom"
    RDF = "rdf"
    UNKNOWN = "unknown"  # not recognised as a feed (the reason is in parse_error)


class DateForm(StrEnum):
    """``items.date_form``: which form an item's date took (``pipelines.document.dates``)."""

    RFC822_UNIVERSAL = "rfc822-universal"
    RFC822_OTHER_ZONE = "rfc822-other-zone"
    RFC822_2DIGIT_YEAR = "rfc822-2digit-year"
    ISO8601 = "iso8601"
    OTHER_PARSED = "other-parsed"
    UNPARSED = "unparsed"
    NOT_TRIED = "not-tried"


class FeedMediaType(StrEnum):
    """The feed media types the Universal Subscription Mechanism and autodiscovery name."""

    RSS = "application/rss+xml"
    ATOM = "application/atom+xml"
    RDF = "application/rdf+xml"


#: Which feed family each autodiscovery media type announces.
MEDIA_TYPE_FORMAT: dict[FeedMediaType, FeedFormat] = {
    FeedMediaType.RSS: FeedFormat.RSS,
    FeedMediaType.ATOM: FeedFormat.ATOM,
    FeedMediaType.RDF: FeedFormat.RDF,
}


class Expect(StrEnum):
    """What the crawl expects to find at a URL it requests (the content still decides)."""

    PAGE = "page"  # a seed site or an htmlUrl: autodiscovery runs on it
    FEED = "feed"  # an xmlUrl or an advertised link: an HTML page there is recorded as not_feed
    OPML = "opml"  # an --opml URL or an include outline
    ANY = "any"  # a --url: a feed, a page or a list


class DueHint(StrEnum):
    """``fetch_log.due_hint``: what decided when a feed is next due (``pipelines/dataset/schedule.py``)."""

    FIRST_FETCH = "first-fetch"  # never fetched before: due now
    IGNORE_HINTS = "ignore-hints"  # --ignore-hints: due now
    TTL = "ttl"  # RSS <ttl>, minutes
    SY = "sy"  # sy:updatePeriod / sy:updateFrequency
    MAX_AGE = "max-age"  # Cache-Control max-age (or no-cache / no-store: due at once)
    EXPIRES = "expires"  # the Expires header
    RETRY_AFTER = "retry-after"  # Retry-After on a 429 or 503
    SKIP = "skip"  # moved out of <skipHours> / <skipDays>
    ADAPTIVE = "adaptive"  # no publisher hint: the feed's own items per week
    MIN_INTERVAL = "min-interval"  # a hint asked for sooner than --min-interval
    MAX_INTERVAL = "max-interval"  # a hint asked for later than --max-interval (or no hint and no history)


class IdentitySource(StrEnum):
    """``items.identity_source``: what an item's identity was taken from."""

    GUID = "guid"  # RSS guid, Atom id, RSS 1.0 rdf:about
    LINK = "link"  # no guid: the item's link
    HASH = "hash"  # neither: a hash of title, description and enclosure URL


class ContentKind(StrEnum):
    """``items.content_kind``: the kind of an item's main body (its full content, else its description)."""

    HTML = "html"  # Atom type html; RSS content:encoded; an RSS description whose text holds a tag
    XHTML = "xhtml"  # Atom type xhtml
    PLAIN = "plain"  # Atom type text (or any other type); an RSS description without a tag
