"""What every rule works with: the findings being gathered, the rule failures, and the tree.

:class:`Acc` gathers findings as ``(rule, scope) -> [count, first example]``
and runs rules under one guard (:meth:`Acc.run`, :meth:`Acc.guard`, and
written out in ``walk.walk_scope`` and ``walk.walk_inner``, the hot loops):
an exception raised inside a rule is recorded against the rule's id (see
:class:`RuleFailure`) and the other rules go on. Nothing else in the package
catches broadly.

The tree helpers read element children and texts the way the parser does,
reusing what it kept (:class:`Notes`, given by
``parse_feed(..., with_notes=True)``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, ParamSpec, Protocol, TypeAlias, cast

from pipelines.document.checks.rules import RULE_ORDER, RULES, Finding
from pipelines.document.dates import ParsedDate
from schemas.namespaces import element_name
from schemas.pickling import by_fields

if TYPE_CHECKING:
    from lxml import etree

Element: TypeAlias = "etree._Element"
P = ParamSpec("P")
#: The 3.2 rules a date-time value breaks, and its timestamp (None when invalid): see ``checks.datetimes``.
DateVerdict: TypeAlias = tuple[tuple[str, ...], float | None]

__all__ = [
    "Acc",
    "CheckResult",
    "DateVerdict",
    "Element",
    "Notes",
    "RuleFailure",
    "children",
    "has_child_elements",
    "is_core",
    "leaf_text",
    "text_of",
]


class Notes(Protocol):
    """What the parser knows about its tree (``pipelines.document.feedparse.TreeNotes``)."""

    #: Only a text containing this needs :meth:`restore`.
    MARK: str

    @property
    def children(self) -> Mapping[Element, list[tuple[Element, str]]]:
        """Element -> its element children and their names, where the parser kept them."""
        ...

    @property
    def leaf_texts(self) -> Mapping[Element, str] | None:
        """Element without children -> its text as in the document, for the texts the parser read (or None)."""
        ...

    @property
    def dates(self) -> Mapping[str, ParsedDate]:
        """Date text (stripped) -> what ``parse_date`` gave for it, for the dates the parser read."""
        ...

    def restore(self, text: str) -> str:
        """A text read from the tree, turned back into the document's text."""
        ...


@by_fields
@dataclass(frozen=True, slots=True)
class RuleFailure:
    """A rule that raised instead of deciding, in one feed: how often, and the first error.

    ``rule`` is the id of the rule whose function raised (for a function that
    decides between exclusive rules, the first of them in :data:`RULES`), or
    ``walk:<scope>`` when reading a scope's children failed before its rules ran.
    """

    rule: str
    count: int
    error: str  #: ``"ExceptionType: message"`` of the first failure


class CheckResult(list[Finding]):
    """The findings (a list, in :data:`RULES` order) and the rules that failed internally.

    A list so that it is used and compared as the findings alone; ``failures``
    is empty for a document every rule could decide.
    """

    __slots__ = ("failures",)

    def __init__(self, findings: Iterable[Finding] = (), failures: Iterable[RuleFailure] = ()) -> None:
        super().__init__(findings)
        self.failures: tuple[RuleFailure, ...] = tuple(failures)


def _same(text: str) -> str:
    return text


def _short(value: str | None, limit: int = 200) -> str | None:
    if value is None:
        return None
    value = value.strip()
    return value if len(value) <= limit else value[: limit - 1] + "…"


class _Hit:
    __slots__ = ("count", "example")

    def __init__(self, count: int, example: str | None) -> None:
        self.count = count
        self.example = example


class Acc:
    """Findings and rule failures being gathered for one document, and what the rules share."""

    __slots__ = (
        "body",
        "candidates",
        "children",
        "children_read",
        "date_memo",
        "dates",
        "failed",
        "future_limit",
        "hits",
        "leaf_texts",
        "mark",
        "now",
        "restore",
    )

    def __init__(self, body: bytes, now: datetime | None, notes: Notes | None = None) -> None:
        self.hits: dict[tuple[str, str], _Hit] = {}
        self.failed: dict[str, RuleFailure] = {}
        self.body = body
        self.now = now
        #: Turns a text read from the tree into the document's text (see ``check_feed``'s ``notes``).
        self.restore: Callable[[str], str] = _same if notes is None else notes.restore
        #: Only a text containing this needs ``restore`` (NUL, which no XML text contains, when nothing does).
        self.mark: str = "\x00" if notes is None else notes.MARK
        #: element -> its element children and their names, when the parser kept them
        self.children: Mapping[Element, list[tuple[Element, str]]] = {} if notes is None else notes.children
        #: element -> its element children and their names, as read here where the parser kept none (Atom's
        #: rules read an entry's children three or four times)
        self.children_read: dict[Element, list[tuple[Element, str]]] = {}
        #: element without children -> its text, for those the parser read (not read again)
        self.leaf_texts: Mapping[Element, str] = {} if notes is None or notes.leaf_texts is None else notes.leaf_texts
        self.future_limit: float | None = None  # see checks.datetimes
        self.date_memo: tuple[str, DateVerdict] | None = None  # the last date-time read, see checks.datetimes
        #: the dates the parser read, with what it found (see checks.datetimes)
        self.dates: Mapping[str, ParsedDate] = {} if notes is None else notes.dates
        self.candidates: list[tuple[Element, str, str]] = []  # (element, its text, scope) for the 3.1 check

    def add(self, rule: str, scope: str, example: str | None, count: int = 1) -> None:
        hit = self.hits.get((rule, scope))
        if hit is None:
            self.hits[(rule, scope)] = _Hit(count, _short(example))
        else:
            hit.count += count

    def run(self, checks: Iterable[tuple[str, Callable[P, object]]], *args: P.args, **kwargs: P.kwargs) -> None:
        """Run each ``(rule id, function)`` on the arguments; a function that raises is recorded, not fatal."""
        for rule, fn in checks:
            try:
                fn(*args, **kwargs)
            except Exception as exc:  # the boundary: an odd document must not stop the other rules or the crawl
                self.fail(rule, exc)

    def guard(self, rule: str, fn: Callable[P, object], *args: P.args, **kwargs: P.kwargs) -> None:
        """Run one function as the rule ``rule`` (see :meth:`run`)."""
        try:
            fn(*args, **kwargs)
        except Exception as exc:  # the boundary, as in run
            self.fail(rule, exc)

    def fail(self, rule: str, exc: BaseException) -> None:
        failed = self.failed.get(rule)
        if failed is None:
            self.failed[rule] = RuleFailure(rule, 1, f"{type(exc).__name__}: {exc}")
        else:
            self.failed[rule] = replace(failed, count=failed.count + 1)

    def result(self, skip: frozenset[str] = frozenset()) -> CheckResult:
        """The findings gathered, in :data:`RULES` order, but those of the rules in ``skip``."""
        hits = self.hits.items() if not skip else [kv for kv in self.hits.items() if kv[0][0] not in skip]
        order = sorted(hits, key=lambda kv: RULE_ORDER[kv[0][0]])
        findings = [Finding(rule, RULES[rule].severity, scope, h.count, h.example) for (rule, scope), h in order]
        return CheckResult(findings, self.failed.values())


# ---------------------------------------------------------------- the tree

_NAMES: dict[str, str] = {}


def name_of(tag: str) -> str:
    """Census name of a tag ('title', 'dc:creator', '{uri}x'), cached."""
    name = _NAMES.get(tag)
    if name is None:
        if len(_NAMES) > 4096:
            _NAMES.clear()
        name = _NAMES[tag] = element_name(tag)
    return name


def children(el: Element, acc: Acc) -> list[tuple[Element, str]]:
    """The element children of ``el`` with their names: as the parser kept them, or read now."""
    kids = acc.children.get(el)
    if kids is None:
        kids = acc.children_read.get(el)
        if kids is None:
            names = _NAMES
            kids = [(ch, names.get(t) or name_of(t)) for ch in el if isinstance(t := ch.tag, str)]
            acc.children_read[el] = kids
    return kids


def is_core(name: str) -> bool:
    """An element in no namespace (one the RSS specification may define)."""
    return ":" not in name and name[:1] != "{"


def text_of(el: Element, acc: Acc) -> str:
    """The element's text, its children's included, as in the document; '' when it has none."""
    if len(el) == 0:
        text = el.text
        if text is None:
            return ""
    else:
        text = "".join(cast("Iterator[str]", el.itertext()))  # str for a tree parsed from bytes
    return acc.restore(text) if acc.mark in text else text


def leaf_text(el: Element, acc: Acc) -> str:
    """``el.text`` (children ignored), or ''."""
    text = el.text
    if text is None:
        return ""
    return acc.restore(text) if acc.mark in text else text


def has_child_elements(el: Element) -> bool:
    return len(el) > 0 and any(isinstance(c.tag, str) for c in el)
