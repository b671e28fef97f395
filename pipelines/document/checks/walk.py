"""The one walk over a scope's children, driven by that scope's table of rules.

Every scope the profile describes (``rss``, ``channel``, ``item``, ``image``,
``textInput``) is a :class:`Section`: the elements it defines and, for each,
the rules to run on it. :func:`walk_scope` goes through the element's
children once, in document order:

* a namespaced child (``atom:link``, ``{uri}x``...) gets its ``element_rules``;
* a child in no namespace that the scope does not define is an
  ``undefined-element`` (section 1);
* a container (``image``, ``enclosure``...) gets its ``element_rules``, its
  text is not read;
* any other child is a character-data element: a child element inside it is
  ``text-element-has-children`` (3.1), its text is read once (as in the
  document, see ``context.text_of``), kept if it is the first of its name,
  noted for the 3.1 byte check if it is plain text that contains "&", "<" or
  ">", and given to its ``text_rules``.

Then the scope's ``scope_rules`` run, in table order, on the :class:`Walk`
(what was seen where); a scope rule may walk the scopes inside it (a
channel's images and items). A rule is a ``(rule id, function)`` pair, run
under the guard of :meth:`Acc.run <pipelines.document.checks.context.Acc.run>`
(written out in :func:`walk_scope`, the hot loop): a rule that raises is
recorded against its id and the others go on.

Each rule is one small function; rules every scope has (required and
single elements) are made per scope by :func:`required` and
:func:`at_most_once`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pipelines.document.checks.context import Acc, Element, children, has_child_elements, is_core, text_of

__all__ = ["ElementRule", "ScopeRule", "Section", "TextRule", "Walk", "at_most_once", "required", "walk_scope"]


class Walk:
    """What one scope element contains: its children, how often and where each name came first."""

    __slots__ = ("el", "first_at", "inner", "kids", "parent", "scope", "seen", "texts")

    def __init__(self, scope: str, el: Element, kids: list[tuple[Element, str]], parent: Walk | None) -> None:
        self.scope = scope
        self.el = el
        self.kids = kids  #: the element children and their names, in document order
        self.parent = parent  #: the walk of the enclosing scope (an image's or item's channel)
        #: name -> how many children have it (every child, namespaced or undefined too)
        self.seen: dict[str, int] = {}
        #: name -> 1-based position of its first occurrence among the element children
        self.first_at: dict[str, int] = {}
        #: name -> text of its first occurrence, for the character-data elements
        self.texts: dict[str, str] = {}
        #: the walks of the scopes inside this one (a channel's images and items), once each is done
        self.inner: list[Walk] = []

    def named(self, name: str) -> list[Element]:
        """The children called ``name``, in document order."""
        return [el for el, n in self.kids if n == name]


#: The characters 3.1 is about: a plain text with one of them is noted for the byte check.
_SPECIALS = re.compile("[&<>]")

#: A rule on a character-data element: (acc, scope, text, element).
TextRule = Callable[[Acc, str, str, Element], None]
#: A rule on a container or namespaced element: (acc, scope, element).
ElementRule = Callable[[Acc, str, Element], None]
#: A rule on the whole scope, after its children: (acc, walk).
ScopeRule = Callable[[Acc, Walk], None]


@dataclass(frozen=True, slots=True)
class Section:
    """One scope of the profile: the elements it defines and the rules on each."""

    scope: str
    #: the elements in no namespace the RSS specification defines here
    defined: frozenset[str]
    #: defined elements that hold other elements or only attributes: their text is not read
    containers: frozenset[str] = frozenset()
    #: character-data elements whose "&" / "<" / ">" encoding matters (3.1)
    plain: frozenset[str] = frozenset()
    #: character-data element -> the rules on its text
    text_rules: Mapping[str, Sequence[tuple[str, TextRule]]] = field(default_factory=dict)
    #: container or namespaced element -> the rules on the element
    element_rules: Mapping[str, Sequence[tuple[str, ElementRule]]] = field(default_factory=dict)
    #: rules on the whole scope, run in this order after its children
    scope_rules: Sequence[tuple[str, ScopeRule]] = ()
    # the two tables the walk looks each child up in: every character-data element, every other element with rules
    _texts: dict[str, Sequence[tuple[str, TextRule]]] = field(init=False, repr=False, compare=False)
    _elements: dict[str, Sequence[tuple[str, ElementRule]]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        texts = {name: self.text_rules.get(name, ()) for name in sorted(self.defined - self.containers)}
        elements = {name: self.element_rules.get(name, ()) for name in sorted(self.containers)}
        object.__setattr__(self, "_texts", texts)
        object.__setattr__(self, "_elements", elements | dict(self.element_rules))


def walk_scope(acc: Acc, section: Section, el: Element, parent: Walk | None = None) -> Walk:
    """Run ``section``'s rules on ``el`` and its children; return what was seen.

    This is the hot loop of the checks: texts are read and the rules on each
    child run in line (rather than through ``Acc.run``, with the same guard).
    """
    scope, plain, texts, elements = section.scope, section.plain, section._texts, section._elements
    walk = Walk(scope, el, children(el, acc), parent)
    seen, first_at, first_text = walk.seen, walk.first_at, walk.texts
    mark = acc.mark
    for position, (child, name) in enumerate(walk.kids, 1):
        seen[name] = seen.get(name, 0) + 1
        first_at.setdefault(name, position)
        if (text_rules := texts.get(name)) is not None:
            if len(child):
                text = _compound_text(acc, scope, child, name)
            else:
                text = child.text or ""
                if mark in text:
                    text = acc.restore(text)
            if name not in first_text:
                first_text[name] = text
            if name in plain and _SPECIALS.search(text) is not None:
                acc.candidates.append((child, child.tag, scope))
            for rule, text_rule in text_rules:
                try:
                    text_rule(acc, scope, text, child)
                except Exception as exc:  # the boundary, as in Acc.run: recorded, the other rules go on
                    acc.fail(rule, exc)
        elif (element_rules := elements.get(name)) is not None:
            for rule, element_rule in element_rules:
                try:
                    element_rule(acc, scope, child)
                except Exception as exc:  # the boundary, as in Acc.run: recorded, the other rules go on
                    acc.fail(rule, exc)
        elif is_core(name):  # no namespace, not defined here
            acc.add("undefined-element", scope, name)
    for rule, scope_rule in section.scope_rules:
        try:
            scope_rule(acc, walk)
        except Exception as exc:  # the boundary, as in Acc.run: recorded, the other rules go on
            acc.fail(rule, exc)
    # The scopes inside this one are needed only by the rules above: let them go now, so no
    # walk <-> parent cycle keeps the document's tree alive until the garbage collector runs.
    walk.inner.clear()
    if parent is not None:
        # The enclosing scope's rules read only what this scope saw (seen, texts), never its children:
        # drop them, so a channel of 100,000 items does not hold 100,000 lists of element proxies.
        walk.kids, walk.first_at = [], {}
        parent.inner.append(walk)
    return walk


def _compound_text(acc: Acc, scope: str, child: Element, name: str) -> str:
    """The text of a character-data element that has children: a child element breaks 3.1."""
    if has_child_elements(child):
        acc.add("text-element-has-children", scope, name)
    return text_of(child, acc)


# ---------------------------------------------------------------- rules every scope has, made for each


def required(rule: str, names: Sequence[str]) -> ScopeRule:
    """A scope rule: ``rule`` once per name of ``names`` that no child has."""

    def missing(acc: Acc, walk: Walk) -> None:
        for name in names:
            if name not in walk.seen:
                acc.add(rule, walk.scope, name)

    return missing


def required_attributes(rule: str, attrs: Sequence[str]) -> ElementRule:
    """An element rule: ``rule`` once, naming every attribute of ``attrs`` the element lacks."""

    def missing(acc: Acc, scope: str, el: Element) -> None:
        absent = [a for a in attrs if el.get(a) is None]
        if absent:
            acc.add(rule, scope, ", ".join(absent))

    return missing


def at_most_once(rule: str, names: frozenset[str]) -> ScopeRule:
    """A scope rule: ``rule`` for each name of ``names`` that more than one child has (counting the extras)."""

    def duplicates(acc: Acc, walk: Walk) -> None:
        if len(walk.seen) == len(walk.kids):
            return  # every child has a name of its own
        for name, n in walk.seen.items():
            if n > 1 and name in names:
                acc.add(rule, walk.scope, name, n - 1)

    return duplicates
