"""The one walk over a scope's children, driven by that scope's table of rules.

Every scope the profile describes (``rss``, ``channel``, ``item``, ``image``,
``textInput``) is a :class:`Section`: the elements it defines and, for each,
the rules to run on it. :func:`walk_scope` goes through the element's
children once, in document order:

* a namespaced child (``atom:link``, ``{uri}x``...) gets its ``element_rules``;
* a child in no namespace that the scope does not define is an
  ``undefined-element`` (section 1; the section's ``undefined`` rule), and
  a child of a namespace whose vocabulary is closed (``Section.closed``)
  that the scope does not define (``Section.namespace_defined``) a
  ``namespace-undefined-element``;
* a container (``image``, ``enclosure``...) gets its ``element_rules``, its
  text is not read;
* any other child is a character-data element: a child element inside it is
  ``text-element-has-children`` (3.1), its text is read once (as in the
  document, see ``context.text_of``; taken from ``Acc.leaf_texts`` when the
  parser has read it already), kept if it is the first of its name,
  noted for the 3.1 check if it is plain text that contains "<", and given
  to its ``text_rules`` (for an element the section names in ``later``,
  once the scopes around it are walked: see :func:`walk_inner`).

Then the scope's ``scope_rules`` run, in table order, on the :class:`Walk`
(what was seen where); a scope rule may walk the scopes inside it (a
channel's images and items, through :func:`walk_inner`). A scope rule that
is only about some elements (``content:encoded``, an enclosure...) is named
in the section's ``about`` with them, and runs only for a scope that has one.
A rule is a ``(rule id, function)`` pair, run under the guard of
:meth:`Acc.run <pipelines.document.checks.context.Acc.run>` (written out in
:func:`walk_scope` and :func:`walk_inner`, the hot loops): a rule that raises
is recorded against its id and the others go on.

Each rule is one small function; rules every scope has (required and
single elements) are made per scope by :func:`required` and
:func:`at_most_once`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pipelines.document.checks.context import Acc, Element, children, is_core, name_of, text_of

__all__ = [
    "ElementRule",
    "ScopeRule",
    "Section",
    "TextRule",
    "Walk",
    "at_most_once",
    "required",
    "walk_inner",
    "walk_scope",
]


class Walk:
    """What one scope element contains: its children, how often and where each name came first."""

    __slots__ = ("_repeated", "el", "inner", "kids", "parent", "scope", "seen", "texts")

    def __init__(self, scope: str, el: Element, kids: list[tuple[Element, str]], parent: Walk | None) -> None:
        self.scope = scope
        self.el = el
        self.kids = kids  #: the element children and their names, in document order
        self.parent = parent  #: the walk of the enclosing scope (an image's or item's channel)
        #: name -> how many children have it (every child, namespaced or undefined too)
        self.seen: dict[str, int] = {}
        #: name -> text of its first occurrence, for the character-data elements
        self.texts: dict[str, str] = {}
        #: the walks of the scopes inside this one (a channel's images and items), once each is done
        self.inner: list[Walk] = []
        self._repeated: Sequence[tuple[str, int]] | None = None

    def named(self, name: str) -> list[Element]:
        """The children called ``name``, in document order."""
        return [el for el, n in self.kids if n == name]

    def repeated(self) -> Sequence[tuple[str, int]]:
        """The names more than one child has, with their counts (found once, for every rule that asks)."""
        if self._repeated is None:
            seen = self.seen
            self._repeated = () if len(seen) == len(self.kids) else [(n, k) for n, k in seen.items() if k > 1]
        return self._repeated

    def position(self, name: str) -> int | None:
        """The 1-based position of the first child called ``name`` among the element children, or None."""
        for position, (_, n) in enumerate(self.kids, 1):
            if n == name:
                return position
        return None


#: A rule on a character-data element: (acc, scope, text, element).
TextRule = Callable[[Acc, str, str, Element], None]
#: A rule on a container or namespaced element: (acc, scope, element).
ElementRule = Callable[[Acc, str, Element], None]
#: A rule on the whole scope, after its children: (acc, walk).
ScopeRule = Callable[[Acc, Walk], None]
#: Character-data elements whose rules are still to run: (the rules, the text, the element), in document order.
Later = list[tuple[Sequence[tuple[str, TextRule]], str, Element]]


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
    #: scope rule id -> the elements it is about: it runs only when the scope has one of them
    about: Mapping[str, frozenset[str]] = field(default_factory=dict)
    #: character-data elements whose text rules run after the walk of this section's element, when it is
    #: walked with others (:func:`walk_inner`): for all of them together, in document order. One reader
    #: kept busy on one kind of value (an item's dates) runs faster than one called between other rules.
    #: Only for rules whose findings no other rule of the scope reports: a finding keeps its first example.
    later: frozenset[str] = frozenset()
    #: the rule a child in no namespace that this scope does not define breaks (RSS 1.0 has its own)
    undefined: str = "undefined-element"
    #: the prefixes of the namespaces whose vocabulary is closed (``namespaces.CLOSED``), and the names of theirs
    #: this scope defines: any other child with one of these prefixes is a ``namespace-undefined-element``
    closed: frozenset[str] = frozenset()
    namespace_defined: frozenset[str] = frozenset()
    # what the walk looks each child up in, made once: every character-data element (its rules, whether
    # it is plain text, whether its rules run later), every other element with rules
    _texts: dict[str, tuple[Sequence[tuple[str, TextRule]], bool, bool]] = field(init=False, repr=False, compare=False)
    _elements: dict[str, Sequence[tuple[str, ElementRule]]] = field(init=False, repr=False, compare=False)
    # every element some scope rule is about, and the scope rules to run for each set of them a scope has
    _about_names: frozenset[str] = field(init=False, repr=False, compare=False)
    _rule_lists: dict[frozenset[str], tuple[tuple[str, ScopeRule], ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if unknown := set(self.about) - {rule for rule, _ in self.scope_rules}:
            raise ValueError(f"{self.scope}: 'about' names rules that are not scope rules: {sorted(unknown)}")
        texts = {
            name: (self.text_rules.get(name, ()), name in self.plain, name in self.later)
            for name in sorted(self.defined - self.containers)
        }
        elements = {name: self.element_rules.get(name, ()) for name in sorted(self.containers)}
        object.__setattr__(self, "_texts", texts)
        object.__setattr__(self, "_elements", elements | dict(self.element_rules))
        object.__setattr__(self, "_about_names", frozenset().union(*self.about.values()))
        object.__setattr__(self, "_rule_lists", {})

    def rules_for(self, seen: Mapping[str, int]) -> tuple[tuple[str, ScopeRule], ...]:
        """The scope rules for a scope whose children have the names ``seen``, in table order.

        A rule named in ``about`` is left out when the scope has none of its
        elements. The list is made once for each set of such elements found
        (a few per section; the memo is emptied past :data:`_MAX_RULE_LISTS`).
        """
        present = self._about_names.intersection(seen)
        rules = self._rule_lists.get(present)
        if rules is None:
            if len(self._rule_lists) >= _MAX_RULE_LISTS:
                self._rule_lists.clear()
            rules = self._rule_lists[present] = tuple(
                (rule, fn)
                for rule, fn in self.scope_rules
                if (about := self.about.get(rule)) is None or not about.isdisjoint(present)
            )
        return rules


#: How many scope-rule lists a :class:`Section` keeps (see :meth:`Section.rules_for`).
_MAX_RULE_LISTS = 256


def _unread_text(acc: Acc, scope: str, child: Element, name: str, mark: str) -> str:
    """The text of a text element the parser did not read: one with children, or one it skipped."""
    if len(child):
        return _compound_text(acc, scope, child, name)
    text = child.text or ""
    return acc.restore(text) if mark in text else text


def walk_scope(acc: Acc, section: Section, el: Element, parent: Walk | None = None, later: Later | None = None) -> Walk:
    """Run ``section``'s rules on ``el`` and its children; return what was seen.

    This is the hot loop of the checks: texts are read and the rules on each
    child run in line (rather than through ``Acc.run``, with the same guard),
    except for the elements of ``section.later`` when ``later`` is given: those
    are added to it, for :func:`walk_inner` to run.
    """
    scope, texts, elements = section.scope, section._texts, section._elements
    closed = section.closed
    walk = Walk(scope, el, children(el, acc), parent)
    seen, first_text, mark, read = walk.seen, walk.texts, acc.mark, acc.leaf_texts
    for child, name in walk.kids:
        seen[name] = seen.get(name, 0) + 1
        if (text_element := texts.get(name)) is not None:
            text = read.get(child)  # as the parser read it (an element without children), if it did
            if text is None:
                text = _unread_text(acc, scope, child, name, mark)
            first_text.setdefault(name, text)
            text_rules, plain, run_later = text_element
            if plain and "<" in text:  # what markup left in the text begins with (3.1, see checks.chardata)
                acc.candidates.append((child, text, scope))
            if run_later and later is not None:  # see Section.later
                later.append((text_rules, text, child))
                continue
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
            acc.add(section.undefined, scope, name)
        elif closed:
            _namespace_child(acc, section, scope, child, name)
    for rule, scope_rule in section.rules_for(seen):
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
        walk.kids, walk._repeated = [], None
        parent.inner.append(walk)
    return walk


def walk_inner(acc: Acc, section: Section, parent: Walk, name: str) -> None:
    """Walk each child called ``name`` of ``parent`` as ``section``; one that cannot be walked does not stop the rest.

    A failure is recorded as the rule ``walk:<scope>`` (the guard of ``Acc.guard``, written out: it runs for
    every item). The rules of ``section.later`` run for up to :data:`_LATER_AT_ONCE` of the children at a
    time, and for the last of them before this returns.
    """
    rule = f"walk:{section.scope}"
    later: Later | None = [] if section.later else None
    for el in parent.named(name):
        try:
            walk_scope(acc, section, el, parent, later)
        except Exception as exc:  # the boundary, as in Acc.run: recorded, the other scopes go on
            acc.fail(rule, exc)
        if later is not None and len(later) >= _LATER_AT_ONCE:
            _run_later(acc, section.scope, later)
    if later:
        _run_later(acc, section.scope, later)


#: How many elements' later rules :func:`walk_inner` gathers before it runs them (and lets them go).
_LATER_AT_ONCE = 256


def _run_later(acc: Acc, scope: str, later: Later) -> None:
    """Run the text rules gathered in ``later`` (see :attr:`Section.later`), in document order; empty it."""
    for text_rules, text, child in later:
        for rule, text_rule in text_rules:
            try:
                text_rule(acc, scope, text, child)
            except Exception as exc:  # the boundary, as in Acc.run: recorded, the other rules go on
                acc.fail(rule, exc)
    later.clear()


def _namespace_child(acc: Acc, section: Section, scope: str, child: Element, name: str) -> None:
    """A namespaced child with no rules of its own, in a scope that knows the closed vocabularies.

    Not defined there, with the prefix of a closed vocabulary: ``namespace-undefined-element``. A Dublin Core
    element (text, every one of them) with element children: ``text-element-has-children``, as for RSS's own.
    """
    if name not in section.namespace_defined:
        if name[: name.find(":")] in section.closed:
            acc.add("namespace-undefined-element", scope, name)
    elif name[:3] == "dc:" and len(child):
        _compound_text(acc, scope, child, name)


def _compound_text(acc: Acc, scope: str, child: Element, name: str) -> str:
    """The text of a character-data element that has children: a child element breaks 3.1.

    The finding's example is the first child element's name (``time`` in a ``pubDate``), the element the W3C
    validator reports as undefined there.
    """
    for inner in child:
        if isinstance(tag := inner.tag, str):
            acc.add("text-element-has-children", scope, name_of(tag))
            break
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
        for name, n in walk.repeated():
            if name in names:
                acc.add(rule, walk.scope, name, n - 1)

    return duplicates
