"""Which publishing platform made a feed or a page: a fingerprint table and three readers.

:data:`PLATFORMS` is the one table: for each platform label, the tokens its
generator strings carry, the HTTP header names only it sends, the header
values that name it, and the markers its HTML pages carry. Three pure
readers apply it: :func:`from_generator` (a feed's ``generator``, or an HTML
``<meta name="generator">`` value), :func:`from_headers` (a response's
headers) and :func:`from_page` (the start of an HTML page). Each returns a
frozenset of labels; a caller unions what it has. ``docs/datasets.md``
renders the table ("Platform fingerprints") and ``tests/test_breadth_document.py``
checks it lists every label.

Decisions, written down once:

* Generator tokens match case-insensitively on whole tokens: the token may not
  touch a letter or digit on either side, so ``Ghost 5.2`` and
  ``https://wordpress.org/?v=6.4`` match, ``Ghostwriter`` does not. A token may
  hold dots or spaces (``wp.com``, ``micro.blog``, ``wp engine``); they are
  matched literally. The same tokens are looked for in the values of the
  headers that name software (``Server``, ``X-Powered-By``, ``X-Generator``).
* Unlike mnot's feed-survey, a header *name* is a fingerprint too
  (``X-Drupal-Cache``, ``X-Shopify-Stage``...): a platform that sends its own
  headers says who it is whatever their values. A name pattern ending in
  ``-`` is a prefix (``x-drupal-`` covers ``X-Drupal-Cache`` and
  ``X-Drupal-Dynamic-Cache``); any other is the whole name.
* A few header values outside the software headers are fingerprints of their
  own (WordPress's REST API ``Link: <...>; rel="https://api.w.org/"``); they
  are (name, substring) pairs.
* Page markers are substrings of the lower-cased first 32 KB of a page's text
  (:data:`PAGE_HEAD_CHARS` characters): asset hosts and paths only one
  platform serves. A bare domain a page might merely link to
  (``substack.com``, ``medium.com``) is not a marker: a link to a platform is
  not the platform. ``<meta name="generator">`` is not read here: the caller
  hands its value to :func:`from_generator`.
* Labels beyond the peer's: hugo, jekyll, hexo, eleventy, micro.blog, tumblr,
  typepad, wix (page and headers), movabletype, livejournal, webflow, weebly
  and gatsby; each is identified by a generator string its software writes
  by default or by asset hosts it alone serves.
* Bad input never raises: ``None``, empty strings and odd header values
  give an empty set.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "PAGE_HEAD_CHARS",
    "PLATFORMS",
    "SOFTWARE_HEADERS",
    "Platform",
    "from_generator",
    "from_headers",
    "from_page",
]

#: How much of an HTML page :func:`from_page` reads (the peer reads 32768 bytes).
PAGE_HEAD_CHARS = 32768
#: The headers whose values name the software that answered (lower-cased).
SOFTWARE_HEADERS: tuple[str, ...] = ("server", "x-powered-by", "x-generator")


@dataclass(frozen=True)
class Platform:
    """One row of :data:`PLATFORMS`."""

    label: str
    #: whole tokens of a generator string or of a software header's value (lower case)
    tokens: tuple[str, ...]
    #: header names only this platform sends (lower case; ending in ``-``: a prefix)
    header_names: tuple[str, ...] = ()
    #: (header name, substring of its lower-cased value) pairs outside the software headers
    header_values: tuple[tuple[str, str], ...] = ()
    #: substrings of the lower-cased start of an HTML page
    page_markers: tuple[str, ...] = ()


PLATFORMS: tuple[Platform, ...] = (
    Platform(
        "wordpress",
        ("wordpress", "wp.com", "wp engine"),  # wordpress.org/?v=, WordPress.com CDN, the WP Engine host
        header_values=(("link", "api.w.org"),),  # the REST API link every WordPress sends
        page_markers=("/wp-content/", "/wp-includes/"),
    ),
    Platform(
        "blogger",
        ("blogger", "blogspot"),
        page_markers=("www.blogger.com/static/", "blogblog.com"),  # Blogger's widget and theme hosts
    ),
    Platform(
        "ghost",
        ("ghost",),
        header_names=("x-ghost-",),  # X-Ghost-Cache, X-Ghost-Cache-Status (Ghost(Pro))
        page_markers=("cdn.jsdelivr.net/ghost/", "/ghost/api/content/", "data-ghost="),  # Portal script and API
    ),
    Platform("hugo", ("hugo",)),  # Hugo writes only a generator meta and <generator>Hugo</generator>
    Platform("jekyll", ("jekyll",), page_markers=("<!-- begin jekyll seo tag",)),
    Platform(
        "substack",
        ("substack",),
        page_markers=("substackcdn.com",),
    ),
    Platform(
        "medium",
        ("medium",),
        page_markers=("cdn-client.medium.com", "miro.medium.com"),
    ),
    Platform(
        "squarespace",
        ("squarespace",),
        page_markers=("static1.squarespace.com", "squarespace-cdn.com"),
    ),
    Platform("feedburner", ("feedburner",)),  # a feed proxy: its generator, no page of its own
    Platform(
        "drupal",
        ("drupal",),
        header_names=("x-drupal-",),  # X-Drupal-Cache, X-Drupal-Dynamic-Cache
        page_markers=("/sites/default/files/", "drupal-settings-json"),
    ),
    Platform(
        "joomla",
        ("joomla",),
        page_markers=("/media/jui/", "/media/system/js/"),
    ),
    Platform(
        "shopify",
        ("shopify",),
        header_names=("x-shopify-", "x-shopid"),  # X-Shopify-Stage, X-ShopId
        page_markers=("cdn.shopify.com", "shopify.theme"),
    ),
    Platform(
        "wix",
        ("wix",),  # the meta generator is "Wix.com Website Builder"
        header_names=("x-wix-",),  # X-Wix-Request-Id
        page_markers=("static.wixstatic.com", "static.parastorage.com"),
    ),
    Platform(
        "tumblr",
        ("tumblr",),
        header_names=("x-tumblr-",),  # X-Tumblr-User
        page_markers=("assets.tumblr.com", "static.tumblr.com"),
    ),
    Platform("typepad", ("typepad",), page_markers=("static.typepad.com",)),
    Platform("hexo", ("hexo",)),
    Platform("eleventy", ("eleventy", "11ty")),
    Platform("micro.blog", ("micro.blog",), page_markers=("cdn.micro.blog",)),
    Platform("movabletype", ("movable type", "movabletype")),
    Platform("livejournal", ("livejournal",), page_markers=("l-stat.livejournal.net",)),
    Platform("webflow", ("webflow",), page_markers=("data-wf-site=",)),
    Platform("weebly", ("weebly",), page_markers=("editmysite.com",)),
    Platform("gatsby", ("gatsby",), page_markers=("___gatsby",)),
)


def _tokens_pattern() -> re.Pattern[str]:
    """One pattern for every platform's tokens, a named group per platform (``p0``, ``p1``...): a text is
    scanned once. A token may not touch a letter or digit: "ghost" is not in "ghostwriter"."""
    groups = (
        f"(?P<p{n}>{'|'.join(re.escape(token) for token in platform.tokens)})" for n, platform in enumerate(PLATFORMS)
    )
    return re.compile(f"(?<![a-z0-9])(?:{'|'.join(groups)})(?![a-z0-9])")


_TOKENS = _tokens_pattern()
_LABEL_OF_GROUP = {f"p{n}": platform.label for n, platform in enumerate(PLATFORMS)}
#: Header names: whole names, and prefixes (a pattern ending in "-"), to labels.
_NAMES = {name: p.label for p in PLATFORMS for name in p.header_names if not name.endswith("-")}
_NAME_PREFIXES = tuple((name, p.label) for p in PLATFORMS for name in p.header_names if name.endswith("-"))
#: Header name -> (substring of the lower-cased value, label) pairs.
_VALUES: dict[str, list[tuple[str, str]]] = {}
for _platform in PLATFORMS:
    for _name, _marker in _platform.header_values:
        _VALUES.setdefault(_name, []).append((_marker, _platform.label))


def _from_tokens(text: str) -> set[str]:
    # every match, not only the first: a text may name two platforms ("Hugo, served by Ghost")
    return {_LABEL_OF_GROUP[m.lastgroup] for m in _TOKENS.finditer(text.lower()) if m.lastgroup}


def from_generator(text: str | None) -> frozenset[str]:
    """The platforms a generator string names (a feed's ``generator`` or a ``<meta name="generator">``)."""
    if not text or not isinstance(text, str):
        return frozenset()
    return frozenset(_from_tokens(text))


def from_headers(headers: Mapping[str, str]) -> frozenset[str]:
    """The platforms a response's headers name (names lower-cased, as ``FeedDocument.headers`` has them)."""
    found: set[str] = set()
    for raw_name, value in headers.items():
        name = str(raw_name).lower()  # lower-cased already by contract; cheap insurance
        text = value if isinstance(value, str) else ""
        if name in SOFTWARE_HEADERS and text:
            found |= _from_tokens(text)
        label = _NAMES.get(name)
        if label is not None:
            found.add(label)
        found.update(label for prefix, label in _NAME_PREFIXES if name.startswith(prefix))
        markers = _VALUES.get(name)
        if markers and text:
            lowered = text.lower()
            found.update(label for marker, label in markers if marker in lowered)
    return frozenset(found)


def from_page(head: str) -> frozenset[str]:
    """The platforms the markers in an HTML page's first :data:`PAGE_HEAD_CHARS` characters name."""
    if not head or not isinstance(head, str):
        return frozenset()
    lowered = head[:PAGE_HEAD_CHARS].lower()
    return frozenset(
        platform.label for platform in PLATFORMS if any(marker in lowered for marker in platform.page_markers)
    )
