"""The tally: every element and attribute below a channel-level element, counted at its scope."""

from __future__ import annotations

from typing import Any

from pipelines.document.feedparse.names import _XML_LANG, _name_of
from pipelines.document.feedparse.text import _add_lang, _is_xhtml


def _walk(
    el: Any,
    scope: str,
    acc: dict[str, dict[str, int]],
    names: dict[str, str],
    mode: str,
    langs: set[str] | None = None,
) -> None:
    """Tally the children of ``el`` (and their attributes) at ``scope``, then recurse.

    ``langs``: inside an item, where the ``xml:lang`` values met are noted (the tally sees every attribute).
    """
    counts = acc.get(scope)
    if counts is None:
        counts = acc[scope] = {}
    for ch in el:
        tag = ch.tag
        if tag.__class__ is not str:
            continue
        name = names.get(tag) or _name_of(tag, mode, names)
        counts[name] = counts.get(name, 0) + 1
        keys = ch.keys()
        if keys:
            _tally_attrs(ch, name, keys, counts, None, names, mode, langs)
        if len(ch) and not _is_xhtml(ch):
            _walk(ch, f"{scope}/{name}", acc, names, mode, langs)


def _tally_attrs(
    el: Any,
    name: str,
    keys: list[str],
    counts: dict[str, int],
    seen: set[str] | None,
    names: dict[str, str],
    mode: str,
    langs: set[str] | None = None,
) -> None:
    for key in keys:
        if key[0] == "{":
            if key == _XML_LANG and langs is not None:
                _add_lang(langs, el.get(key))
            key = names.get(key) or _name_of(key, mode, names)
        elif key == "rel" and (name == "link" or name.endswith(":link")):
            key = "rel=" + el.get("rel").strip()
        an = f"{name}@{key}"
        counts[an] = counts.get(an, 0) + 1
        if seen is not None:
            seen.add(an)
