"""Requests as JSON, for the job's queue: :class:`RequestCodec`, scrapy-redis's serializer interface.

**Requests as JSON**, never pickle (what scrapy-redis does by default: a shared
Redis would run code in every worker). ``meta["fc"]`` (:class:`~schemas.items.FetchContext`),
bytes, tuples and dicts with non-string keys are tagged; a meta value of another type
is dropped from the queued copy, counted and logged once.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from schemas.items import FetchContext

_TAG: Final = "__t"


class _Unencodable(TypeError):
    """A value the JSON codec has no form for."""


def _pack(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, FetchContext):
        return {_TAG: "fc", "v": value.to_json()}
    if isinstance(value, bytes):
        return {_TAG: "b", "v": base64.b64encode(value).decode("ascii")}
    if isinstance(value, list):
        return [_pack(v) for v in value]
    if isinstance(value, tuple):
        return {_TAG: "t", "v": [_pack(v) for v in value]}
    if isinstance(value, dict):
        return _pack_dict({k: _pack(v) for k, v in value.items()})
    raise _Unencodable(type(value).__name__)


def _pack_dict(packed: dict[Any, Any]) -> Any:
    """A dict whose values are packed: as a JSON object when its keys allow it."""
    if all(isinstance(k, str) for k in packed) and _TAG not in packed:
        return packed
    return {_TAG: "d", "v": [[_pack(k), v] for k, v in packed.items()]}


_UNPACK: dict[str, Callable[[Any], Any]] = {
    "fc": lambda v: FetchContext.from_json(v),
    "b": lambda v: base64.b64decode(v),
    "t": lambda v: tuple(_unpack(x) for x in v),
    "d": lambda v: {_unpack(k): _unpack(x) for k, x in v},
}


def _unpack(value: Any) -> Any:
    if isinstance(value, list):
        return [_unpack(v) for v in value]
    if isinstance(value, dict):
        tag = value.get(_TAG)
        if tag is None:
            return {k: _unpack(v) for k, v in value.items()}
        if tag not in _UNPACK:
            raise ValueError(f"unknown tag {tag!r} in a queued request")
        return _UNPACK[tag](value["v"])
    return value


#: ``Request.to_dict()`` fields at their defaults: left out of the JSON (``request_from_dict`` restores them).
_REQUEST_DEFAULTS: Final[dict[str, Any]] = {
    "callback": None,
    "errback": None,
    "method": "GET",
    "headers": {},
    "body": b"",
    "cookies": {},
    "encoding": "utf-8",
    "priority": 0,
    "dont_filter": False,
    "flags": [],
    "cb_kwargs": {},
}


def _is_default(key: str, value: Any) -> bool:
    default = _REQUEST_DEFAULTS.get(key, _REQUEST_DEFAULTS)  # the dict itself: no field's value
    return type(value) is type(default) and bool(value == default)


class RequestCodec:
    """scrapy-redis's serializer interface (``dumps``/``loads``): request dicts as JSON.

    Fields at their defaults are left out (``request_from_dict`` gives them back), so a queued
    request costs Redis only what differs from a plain GET.

    A ``meta`` value of a type JSON cannot carry is left out of the queued copy and
    ``on_drop(key, type_name)`` is told; any other field that cannot be carried raises ``TypeError``.
    """

    def __init__(self, on_drop: Callable[[str, str], None] | None = None) -> None:
        self.on_drop = on_drop

    def dumps(self, obj: Mapping[str, Any]) -> str:
        meta: dict[Any, Any] = {}
        for key, value in (obj.get("meta") or {}).items():
            try:
                meta[key] = _pack(value)
            except _Unencodable as exc:
                if self.on_drop is not None:
                    self.on_drop(str(key), str(exc))
        out = {k: _pack(v) for k, v in obj.items() if k != "meta" and not _is_default(k, v)}
        if meta:
            out["meta"] = _pack_dict(meta)
        return json.dumps(out, separators=(",", ":"))

    def loads(self, data: str | bytes) -> dict[str, Any]:
        obj = _unpack(json.loads(data))
        if not isinstance(obj, dict):
            raise ValueError("a queued request is not a JSON object")
        return obj
