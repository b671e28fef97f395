"""RSS 1.0 (RDF Site Summary 1.0, 2000): the structure its specification gives an ``rdf:RDF`` document.

The profile is about RSS 2.0 and none of its rules run on RSS 1.0. These
rules (``source = "rss1"``; their ``section`` is the RSS 1.0
specification's) are the specification's own, section 5, as the W3C Feed
Validator also reads them:

* 5.2 ``rdf:RDF`` holds one ``channel`` and, beside it, the ``image``, the
  ``item`` elements and the ``textinput``; each of these four carries an
  ``rdf:about``, unique in the document (5.3, 5.4, 5.5, 5.6).
* 5.3 the channel: ``title``, ``link``, ``description`` and ``items`` (its
  table of contents) required; its ``image`` and ``textinput`` are only
  references, with an ``rdf:resource``.
* 5.4 image: ``title``, ``url``, ``link``; 5.5 item: ``title``, ``link``
  and optionally ``description``; 5.6 textinput: ``title``,
  ``description``, ``name``, ``link``.
* An element of RSS 1.0 (bare-named, see below) that the model does not
  have at that place is undefined: RSS 2.0's ``language``, ``pubDate``,
  ``width``..., and an ``item`` inside the channel (RSS 1.0 items sit beside
  it, listed by ``items``). Each element of the model is there at most once.
* 6 (modules): Trackback's ``trackback:ping`` / ``trackback:about`` in RSS 1.0
  hold their URL in ``rdf:resource`` (the URL as text is the RSS 2.0 form).

The namespaces' own rules that hold in any feed (``dc-language-invalid``,
``sy-update-frequency-invalid``, ``duplicate-namespace-element``) run on the
channel and the items as in RSS 2.0 (``namespaces``).

Not checked: that ``items`` lists each item's ``rdf:about`` and the
channel's references name the image and textinput (the validator does not
either), that ``rdf:about`` is a URI, and the model's ``item+`` (a feed with
no item yet is not broken).

Which documents: an ``rdf:RDF`` root that declares or uses the RSS 1.0
namespace and has no child in RSS 0.90's (0.90 has neither ``rdf:about`` nor
``items``: none of these rules is defined for it). Element names are the
census's (``schemas.namespaces``): the RSS 1.0 namespace and no namespace are
both written bare, so an element in no namespace counts as one of RSS 1.0's.
"""

from __future__ import annotations

from pipelines.document.checks import namespaces as ns
from pipelines.document.checks.context import Acc, Element, name_of
from pipelines.document.checks.walk import (
    ElementRule,
    ScopeRule,
    Section,
    Walk,
    at_most_once,
    required,
    walk_inner,
    walk_scope,
)
from schemas.namespaces import RDF_NS

__all__ = ["CHANNEL", "IMAGE", "ITEM", "RDF_ROOT", "ROOT", "ROOT_SCOPE", "TEXTINPUT", "is_rss1", "walk_rdf"]

RDF_ROOT = f"{{{RDF_NS}}}RDF"
_RSS10_NS = "http://purl.org/rss/1.0/"
_RSS090_NS = "http://my.netscape.com/rdf/simple/0.9/"
_ABOUT = f"{{{RDF_NS}}}about"
_RESOURCE = f"{{{RDF_NS}}}resource"
#: The scope of the root's findings: the element, named as the census names it.
ROOT_SCOPE = "rdf:RDF"
_UNDEFINED = "rss1-undefined-element"
_DUPLICATE = "rss1-duplicate-element"
_REQUIRED = "rss1-missing-required"


def is_rss1(root: Element) -> bool:
    """An ``rdf:RDF`` root of RSS 1.0: its namespace declared on the root or used by a child, none of RSS 0.90's."""
    if root.tag != RDF_ROOT:
        return False
    tags = [t for ch in root if isinstance(t := ch.tag, str)]
    if any(t.startswith("{" + _RSS090_NS) for t in tags):
        return False
    return _RSS10_NS in root.nsmap.values() or any(t.startswith("{" + _RSS10_NS) for t in tags)


# ---------------------------------------------------------------- element rules


def about_missing(acc: Acc, scope: str, el: Element) -> None:
    """5.3-5.6: channel, image, item and textinput each have a "Required Attribute(s): rdf:about"."""
    if el.get(_ABOUT) is None:
        acc.add("rss1-about-missing", scope, name_of(el.tag))


def resource_missing(acc: Acc, scope: str, el: Element) -> None:
    """5.3.4, 5.3.6: the channel's image and textinput are ``<image rdf:resource="{image_uri}" />`` references."""
    if el.get(_RESOURCE) is None:
        acc.add("rss1-resource-missing", scope, name_of(el.tag))


def trackback_resource_missing(acc: Acc, scope: str, el: Element) -> None:
    """Trackback module, RSS 1.0 form: ``<trackback:ping rdf:resource="..."/>`` (likewise trackback:about)."""
    if el.get(_RESOURCE) is None:
        acc.add("rss1-trackback-resource-missing", scope, name_of(el.tag))


# ---------------------------------------------------------------- scope rules


def channel_missing(acc: Acc, walk: Walk) -> None:
    """5.3: the channel is required."""
    if "channel" not in walk.seen:
        acc.add("rss1-channel-missing", walk.scope, None)


def about_duplicate(acc: Acc, walk: Walk) -> None:
    """5.3-5.6: each rdf:about "must be unique with respect to any other rdf:about attributes in the RSS document"."""
    abouts: set[str] = set()
    for el, name in walk.kids:
        if name in _TOP and (about := el.get(_ABOUT)) is not None:
            if about in abouts:
                acc.add("rss1-about-duplicate", walk.scope, about)
            abouts.add(about)


def walk_each(section: Section) -> ScopeRule:
    """A scope rule: walk each child named as ``section``'s scope as that section."""

    def walk(acc: Acc, parent: Walk) -> None:
        walk_inner(acc, section, parent, section.scope)

    return walk


# ---------------------------------------------------------------- the sections


def _model(text: str) -> frozenset[str]:
    return frozenset(text.split())


_ABOUT_RULE: tuple[str, ElementRule] = ("rss1-about-missing", about_missing)
_RESOURCE_RULE: tuple[str, ElementRule] = ("rss1-resource-missing", resource_missing)
_TRACKBACK_RULE: tuple[str, ElementRule] = ("rss1-trackback-resource-missing", trackback_resource_missing)
_DC_LANGUAGE: tuple[str, ElementRule] = ("dc-language-invalid", ns.dc_language_invalid)
_SY_FREQUENCY: tuple[str, ElementRule] = ("sy-update-frequency-invalid", ns.sy_update_frequency_invalid)


def _single(model: frozenset[str], required_names: str) -> tuple[tuple[str, ScopeRule], ...]:
    """The scope rules every RSS 1.0 scope has: its required elements, and each element of its model at most once."""
    return (
        (_REQUIRED, required(_REQUIRED, required_names.split())),
        (_DUPLICATE, at_most_once(_DUPLICATE, model)),
    )


# In each section every element of the model is a container: no RSS 1.0 rule reads a text, so none is read.
_IMAGE = _model("title url link")
IMAGE = Section(
    scope="image",
    defined=_IMAGE,
    containers=_IMAGE,
    undefined=_UNDEFINED,
    scope_rules=_single(_IMAGE, "title url link"),
)

_TEXTINPUT = _model("title description name link")
TEXTINPUT = Section(
    scope="textinput",
    defined=_TEXTINPUT,
    containers=_TEXTINPUT,
    undefined=_UNDEFINED,
    scope_rules=_single(_TEXTINPUT, "title description name link"),
)

_ITEM = _model("title link description")
ITEM = Section(
    scope="item",
    defined=_ITEM,
    containers=_ITEM,
    undefined=_UNDEFINED,
    element_rules={
        "trackback:ping": (_TRACKBACK_RULE,),
        "trackback:about": (_TRACKBACK_RULE,),
        "dc:language": (_DC_LANGUAGE,),
    },
    scope_rules=(
        *_single(_ITEM, "title link"),
        ("duplicate-namespace-element", ns.duplicate_item_namespace_element),
    ),
    about={"duplicate-namespace-element": ns.ITEM_SINGLE},
)

_CHANNEL = _model("title link description image items textinput")
CHANNEL = Section(
    scope="channel",
    defined=_CHANNEL,
    containers=_CHANNEL,
    undefined=_UNDEFINED,
    element_rules={
        "image": (_RESOURCE_RULE,),
        "textinput": (_RESOURCE_RULE,),
        "dc:language": (_DC_LANGUAGE,),
        "sy:updateFrequency": (_SY_FREQUENCY,),
    },
    scope_rules=(
        *_single(_CHANNEL, "title link description items"),
        ("duplicate-namespace-element", ns.duplicate_channel_namespace_element),
    ),
    about={"duplicate-namespace-element": ns.CHANNEL_SINGLE},
)

#: The elements beside the channel, each walked as its own scope.
_TOP = _model("channel image item textinput")

ROOT = Section(
    scope=ROOT_SCOPE,
    defined=_TOP,
    containers=_TOP,
    undefined=_UNDEFINED,
    element_rules={name: (_ABOUT_RULE,) for name in sorted(_TOP)},
    scope_rules=(
        ("rss1-channel-missing", channel_missing),
        # (channel, image?, item+, textinput?): one channel, at most one image and one textinput
        (_DUPLICATE, at_most_once(_DUPLICATE, _model("channel image textinput"))),
        ("rss1-about-duplicate", about_duplicate),
        ("walk:channel", walk_each(CHANNEL)),
        ("walk:image", walk_each(IMAGE)),
        ("walk:item", walk_each(ITEM)),
        ("walk:textinput", walk_each(TEXTINPUT)),
    ),
    about={
        "walk:channel": frozenset(["channel"]),
        "walk:image": frozenset(["image"]),
        "walk:item": frozenset(["item"]),
        "walk:textinput": frozenset(["textinput"]),
    },
)


def walk_rdf(acc: Acc, root: Element) -> None:
    """Run the RSS 1.0 rules on an ``rdf:RDF`` root (see :func:`is_rss1`)."""
    walk_scope(acc, ROOT, root)
