"""Pickling a slotted dataclass as its class and its field values, for what crosses the document pool.

Every page and feed the crawl reads goes to a document worker pickled and comes back pickled
(pipelines/document/pool.py). Pickle rebuilds a slotted dataclass field by field: through the
``__setstate__`` that ``dataclasses`` writes in Python for a frozen one, through copyreg's
general state for the others. Measured on the benchmark web's pages, a page's task and answer
took 44 us of the crawling process's time to pickle and unpickle, 28 us with :func:`by_fields`
(and 41 -> 26 us in the worker). :func:`by_fields` gives a class a ``__reduce__`` that returns the
class and its field values, so unpickling is one call of the class, as written.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["by_fields"]

T = TypeVar("T")


def by_fields(cls: type[T]) -> type[T]:
    """``cls`` (a dataclass), pickled as ``cls(*field values)``.

    Refused (TypeError, at import) for a class that calling with its field values would not rebuild
    as it was: an ``__init__`` whose parameters are not the fields in order (a field left out of it, a
    keyword-only one, an ``InitVar``, one written by hand), or a ``__post_init__``. A subclass is refused
    when it is defined: it would be pickled as this class.
    """
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    positional = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.POSITIONAL_ONLY)
    generated = cls.__dataclass_params__.init  # type: ignore[attr-defined]  # else an __init__ written by hand
    if not generated or [p.name for p in parameters] != names or any(p.kind not in positional for p in parameters):
        raise TypeError(f"{cls.__name__}: not rebuilt by calling it with its field values")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: not rebuilt by calling it with its field values (__post_init__)")
    many: Callable[[Any], tuple[Any, ...]] | None = operator.attrgetter(*names) if len(names) > 1 else None

    def values(obj: Any) -> tuple[Any, ...]:
        return many(obj) if many is not None else tuple(getattr(obj, name) for name in names)

    def __reduce__(self: Any) -> tuple[type[T], tuple[Any, ...]]:
        return cls, values(self)

    def __init_subclass__(sub: type, /, **kwargs: Any) -> None:
        raise TypeError(f"{sub.__name__}: {cls.__name__} is pickled by its own fields, not a subclass's")

    cls.__reduce__ = __reduce__  # type: ignore[method-assign]
    cls.__init_subclass__ = classmethod(__init_subclass__)  # type: ignore[assignment,method-assign]
    return cls
