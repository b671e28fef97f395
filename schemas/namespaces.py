"""The one fixed table of namespace prefixes used to name elements.

Namespaced elements are written ``prefix:local`` with the prefix from this
table, whatever prefix the document itself declared, so that ``dc:creator``
means the same thing in every row of every dataset. Namespaces missing from
the table are written in Clark notation, ``{uri}local``.
"""

from __future__ import annotations

#: The namespaces whose elements RSS 1.0 / 0.90 define: their elements keep
#: their bare local name, like un-namespaced RSS 2.0 elements.
RSS_CORE_NAMESPACES: frozenset[str] = frozenset(
    {
        "http://purl.org/rss/1.0/",  # RSS 1.0
        "http://my.netscape.com/rdf/simple/0.9/",  # RSS 0.90
        "http://backend.userland.com/rss2",  # a rare namespaced RSS 2.0
        "http://blogs.law.harvard.edu/tech/rss",  # ditto
    }
)

ATOM_NS = "http://www.w3.org/2005/Atom"
ATOM03_NS = "http://purl.org/atom/ns#"
RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"

#: prefix -> namespace URI. Order only matters for readability.
PREFIXES: dict[str, str] = {
    "atom": ATOM_NS,
    "atom03": ATOM03_NS,
    "content": "http://purl.org/rss/1.0/modules/content/",
    "dc": "http://purl.org/dc/elements/1.1/",
    "dcterms": "http://purl.org/dc/terms/",
    "slash": "http://purl.org/rss/1.0/modules/slash/",
    "sy": "http://purl.org/rss/1.0/modules/syndication/",
    "wfw": "http://wellformedweb.org/CommentAPI/",
    "itunes": "http://www.itunes.com/dtds/podcast-1.0.dtd",
    "media": "http://search.yahoo.com/mrss/",
    "rdf": RDF_NS,
    "trackback": "http://madskills.com/public/xml/rss/module/trackback/",
    "creativeCommons": "http://backend.userland.com/creativeCommonsRssModule",
    "cc": "http://web.resource.org/cc/",
    "georss": "http://www.georss.org/georss",
    "geo": "http://www.w3.org/2003/01/geo/wgs84_pos#",
    "feedburner": "http://rssnamespace.org/feedburner/ext/1.0",
    "podcast": "https://podcastindex.org/namespace/1.0",
    "googleplay": "http://www.google.com/schemas/play-podcasts/1.0",
    "admin": "http://webns.net/mvcb/",
    "xhtml": "http://www.w3.org/1999/xhtml",
    "taxo": "http://purl.org/rss/1.0/modules/taxonomy/",
    "thr": "http://purl.org/syndication/thread/1.0",
    "opensearch": "http://a9.com/-/spec/opensearch/1.1/",
    "xml": "http://www.w3.org/XML/1998/namespace",
}

#: Aliases: other URIs seen in the wild for a namespace in PREFIXES.
ALIASES: dict[str, str] = {
    "http://www.itunes.com/DTDs/Podcast-1.0.dtd": "itunes",
    "https://www.itunes.com/dtds/podcast-1.0.dtd": "itunes",
    "http://search.yahoo.com/mrss": "media",
    "https://search.yahoo.com/mrss/": "media",
    "http://purl.org/atom/ns#draft-ietf-atompub-format-08": "atom03",
    "http://purl.org/dc/elements/1.0/": "dc",
    "http://a9.com/-/spec/opensearchrss/1.0/": "opensearch",
    "http://podcastindex.org/namespace/1.0": "podcast",
}

#: namespace URI -> prefix, derived once from the two tables above.
URI_TO_PREFIX: dict[str, str] = {uri: p for p, uri in PREFIXES.items()} | ALIASES


def element_name(tag: str) -> str:
    """Name an lxml/ElementTree tag (``{uri}local`` or ``local``) the census way.

    >>> element_name("{http://purl.org/dc/elements/1.1/}creator")
    'dc:creator'
    >>> element_name("pubdate")
    'pubdate'
    """
    if tag[:1] != "{":
        return tag
    uri, _, local = tag[1:].partition("}")
    if uri in RSS_CORE_NAMESPACES:
        return local
    prefix = URI_TO_PREFIX.get(uri)
    return f"{prefix}:{local}" if prefix else tag
