"""Element names: the constants, what each format's own specification defines at each scope, and the
bounded caches of tag -> name (see "Element names" and ``defined`` in the package docstring)."""

from __future__ import annotations

from lxml import etree

from schemas.namespaces import RDF_NS, URI_TO_PREFIX, element_name

_XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_RDF_ABOUT = f"{{{RDF_NS}}}about"
_RDF_RESOURCE = f"{{{RDF_NS}}}resource"
_XHTML_NS = "{http://www.w3.org/1999/xhtml}"
_ATOM03_URIS = frozenset(uri for uri, prefix in URI_TO_PREFIX.items() if prefix == "atom03")
_ENTITY = etree.Entity
_tostring = etree.tostring

_MAX_INT64 = 2**63 - 1
_MAX_INT32 = 2**31 - 1


def _names(*groups: str) -> frozenset[str]:
    return frozenset(n for g in groups for n in g.split())


_RSS_DEFINED: dict[str, frozenset[str]] = {
    "rss": _names("channel"),
    "channel": _names(
        "title link description language copyright managingEditor webMaster pubDate lastBuildDate category",
        "generator docs cloud ttl image rating textInput textinput skipHours skipDays item",
        "cloud@domain cloud@port cloud@path cloud@registerProcedure cloud@protocol category@domain",
    ),
    "item": _names(
        "title link description author category comments enclosure guid pubDate source",
        "enclosure@url enclosure@length enclosure@type guid@isPermaLink category@domain source@url",
    ),
    "image": _names("url title link width height description"),
    "textInput": _names("title description name link"),
    "textinput": _names("title description name link"),
    "skipHours": _names("hour"),
    "skipDays": _names("day"),
}
_RDF_DEFINED: dict[str, frozenset[str]] = {
    "channel": _names("title link description image items textinput item"),
    "item": _names("title link description"),
    "image": _names("title url link"),
    "textinput": _names("title description name link"),
}
_ATOM_PERSON = _names("name uri email")
_ATOM_FEED_META = _names(
    "author category contributor generator icon id link logo rights subtitle title updated",
    "link@href link@rel link@type link@hreflang link@title link@length category@term category@scheme category@label",
    "generator@uri generator@version title@type subtitle@type rights@type",
)
_ATOM_DEFINED: dict[str, frozenset[str]] = {
    "channel": _ATOM_FEED_META | {"entry"},
    "item": _names(
        "author category content contributor id link published rights source summary title updated",
        "link@href link@rel link@type link@hreflang link@title link@length category@term category@scheme category@label",
        "content@type content@src title@type summary@type rights@type",
    ),
    "author": _ATOM_PERSON,
    "contributor": _ATOM_PERSON,
    "item/author": _ATOM_PERSON,
    "item/contributor": _ATOM_PERSON,
    "item/source": _ATOM_FEED_META,
    "item/source/author": _ATOM_PERSON,
    "item/source/contributor": _ATOM_PERSON,
}
_ATOM03_PERSON = _names("name url email")
_ATOM03_DEFINED: dict[str, frozenset[str]] = {
    "channel": _names(
        "title link author contributor tagline id generator copyright info modified entry",
        "link@rel link@type link@href link@title generator@url generator@version",
        "title@type title@mode tagline@type tagline@mode copyright@type copyright@mode info@type info@mode",
    ),
    "item": _names(
        "title link author contributor id modified issued created summary content",
        "link@rel link@type link@href link@title title@type title@mode summary@type summary@mode",
        "content@type content@mode",
    ),
    "author": _ATOM03_PERSON,
    "contributor": _ATOM03_PERSON,
    "item/author": _ATOM03_PERSON,
    "item/contributor": _ATOM03_PERSON,
}


def _prefix_table(table: dict[str, frozenset[str]], prefix: str) -> dict[str, frozenset[str]]:
    """The same definitions with the format's elements written ``prefix:local`` (scopes too)."""

    def element(name: str) -> str:
        return prefix + name

    def scope(path: str) -> str:
        return "/".join(p if p in ("channel", "item") else element(p) for p in path.split("/"))

    return {scope(k): frozenset(element(n) for n in names) for k, names in table.items()}


#: family -> scope -> names, for documents that write the format's elements
#: bare (RSS, RDF, and Atom without a namespace or in an unknown one) ...
_DEFINED: dict[str, dict[str, frozenset[str]]] = {
    "rss": _RSS_DEFINED,
    "rdf": _RDF_DEFINED,
    "atom": _ATOM_DEFINED,
    "atom03": _ATOM03_DEFINED,
}
#: ... and for Atom documents in a namespace with a fixed prefix (atom:, atom03:).
_DEFINED_PREFIXED: dict[str, dict[str, frozenset[str]]] = {
    "atom": _prefix_table(_ATOM_DEFINED, "atom:"),
    "atom03": _prefix_table(_ATOM03_DEFINED, "atom03:"),
}


# --------------------------------------------------------------------------- names

_NAME_CACHE_MAX = 20_000
#: One bounded tag -> name cache per naming mode ("" for plain element_name,
#: or the namespace written bare: a namespaced <rss>, a draft-Atom feed).
_NAME_CACHES: dict[str, dict[str, str]] = {"": {}}
_NAME_CACHE_MODES = 8


def _name_of(tag: str, mode: str, cache: dict[str, str]) -> str:
    """Name a tag (see "Element names" in the package docstring); ``mode`` is the namespace written bare, or ''."""
    name = tag[len(mode) + 2 :] if mode and tag.startswith("{" + mode + "}") else element_name(tag)
    if len(cache) >= _NAME_CACHE_MAX:
        cache.clear()
    cache[tag] = name
    return name


def _names_for(mode: str) -> dict[str, str]:
    """The name cache of a naming mode (a fresh one, not kept, once there are enough modes)."""
    names = _NAME_CACHES.get(mode)
    if names is None:
        names = {}
        if len(_NAME_CACHES) < _NAME_CACHE_MODES:
            _NAME_CACHES[mode] = names
    return names


def _defined(table: dict[str, frozenset[str]], own: str, scope: str, name: str) -> bool:
    """See ``defined`` in the package docstring; ``own`` is the format's prefix ('atom:') or ''."""
    element, _, attr = name.partition("@")
    if ":" in element or element[:1] == "{":
        if not own or not element.startswith(own):
            return True
    elif own:
        return False  # an element in no namespace inside a namespaced Atom feed
    if attr:
        attr = attr.partition("=")[0]
        if ":" in attr or attr[:1] == "{":
            return True
        name = f"{element}@{attr}"
    allowed = table.get(scope)
    return allowed is not None and name in allowed


# --------------------------------------------------------------------------- reading values: the handlers
