"""Pickling a slotted dataclass as its class and its field values, for what crosses the document pool.

Every page and feed the crawl reads goes to a document worker pickled and comes back pickled
(pipelines/document/pool.py). A dataclass with ``slots=True`` pickles through the
``__getstate__`` and ``__setstate__`` that ``dataclasses`` writes in Python, which look the fields
up again for every object and set them one by one: measured on the benchmark web's pages, a page's
task and answer took 44 us of the crawling process's time to pickle and unpickle, 28 us with
:func:`by_fields` (and 41 -> 26 us in the worker). :func:`by_fields` gives a class a
``__reduce__`` that returns the class and its field values, so unpickling is one call of the
class, as written.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any, TypeVar

__all__ = ["by_fields"]

T = TypeVar("T")


def by_fields(cls: type[T]) -> type[T]:
    """``cls`` (a dataclass), pickled as ``cls(*field values)``.

    Refused (TypeError, at import) for a class that calling with its field values would not
    rebuild as it was: a field not in ``__init__`` or keyword-only, or a ``__post_init__``.
    """
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if any(not f.init or f.kw_only for f in fields) or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: not rebuilt by calling it with its field values")
    names = [f.name for f in fields]
    values = operator.attrgetter(*names) if len(names) > 1 else (lambda obj: (getattr(obj, names[0]),))

    def __reduce__(self: Any) -> tuple[type[T], tuple[Any, ...]]:
        return cls, values(self)

    cls.__reduce__ = __reduce__  # type: ignore[method-assign]
    return cls
