"""What each setting may hold, checked where the settings are read (issue #38).

``feedcensus crawl`` checks every ``-s NAME=VALUE`` before it crawls (crawler/cli/options.py); the
:class:`~crawler.extensions.settingscheck.SettingsCheck` extension checks the same for every crawl,
also ``scrapy crawl census`` and scrapyd, when the crawler is built: a value that is not of its
default's type (a number, true or false, a JSON object...), a number below its least
(:data:`NUMBER_FLOORS`), a ``FEEDCENSUS_`` name no setting has. Each problem is one line.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable
from typing import Any


def _as_bool(value: str) -> object:
    from scrapy.settings import BaseSettings

    return BaseSettings({"v": value}).getbool("v")


def _as_int_list(value: str) -> object:
    return [int(v) for v in value.split(",") if v.strip()]


def _as_json_object(value: str) -> object:
    import json

    parsed = json.loads(value)
    if not isinstance(parsed, dict):
        raise ValueError("not a JSON object")
    return parsed


def _as_number(value: str) -> object:
    """A finite number (``nan`` and ``inf`` are floats too, and no limit of Scrapy's takes them)."""
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(value)
    return number


#: Numeric settings with a least value: (least, whether the least itself is allowed). Below it Scrapy
#: or the census fails in odd ways mid-crawl (a negative DOWNLOAD_TIMEOUT is a traceback inside Twisted,
#: DOWNLOAD_MAXSIZE=-1 makes every fetch too_large, a progress interval of 0 prints without end).
NUMBER_FLOORS: dict[str, tuple[float, bool]] = {
    **dict.fromkeys(("CONCURRENT_REQUESTS", "CONCURRENT_REQUESTS_PER_DOMAIN", "CONCURRENT_ITEMS"), (1.0, True)),
    # A finished job's keys must outlive its last workers' closing heartbeats, or they find the job gone.
    "FEEDCENSUS_FRONTIER_KEY_TTL": (60.0, True),
    **dict.fromkeys(
        (
            "DOWNLOAD_TIMEOUT",
            "FEEDCENSUS_PARSE_TIMEOUT",
            "FEEDCENSUS_PROGRESS_INTERVAL",
            "FEEDCENSUS_FLUSH_SECONDS",
            "FEEDCENSUS_BATCH_ROWS",
            "FEEDCENSUS_FRONTIER_LEASE",
            "FEEDCENSUS_FRONTIER_HEARTBEAT",
            "FEEDCENSUS_FRONTIER_PREFETCH",
        ),
        (0.0, False),
    ),
    **dict.fromkeys(
        (
            "DOWNLOAD_MAXSIZE",
            "DOWNLOAD_WARNSIZE",
            "DOWNLOAD_DELAY",
            "RETRY_TIMES",
            "REDIRECT_MAX_TIMES",
            "FEEDCENSUS_MAX_URL_LENGTH",
            "FEEDCENSUS_RETRY_BACKOFF_BASE",
            "FEEDCENSUS_RETRY_AFTER_MAX",
            "FEEDCENSUS_WARC_MAX_BYTES",
        ),
        (0.0, True),
    ),
}


def floor_problem(key: str, value: str) -> str | None:
    """What a numeric ``-s`` value must be when it is below its setting's least (None when it is not)."""
    floor = NUMBER_FLOORS.get(key)
    if floor is None:
        return None
    least, allowed = floor
    number = float(value)
    if number > least or (allowed and number == least):
        return None
    if least:
        return f"a number of at least {least:g}"
    return "a number of 0 or more" if allowed else "a number above 0"


def expected_type(default: Any) -> tuple[str, Callable[[str], object]] | None:
    """What a ``-s`` value must be, judged by the setting's default: its description and a check that raises."""
    from scrapy.settings import BaseSettings

    if isinstance(default, bool):
        return "true or false", _as_bool
    if isinstance(default, int | float):
        return "a number", _as_number
    if isinstance(default, list | tuple) and default and all(isinstance(v, int) for v in default):
        return "a comma-separated list of whole numbers", _as_int_list
    if isinstance(default, dict | BaseSettings):
        return "a JSON object", _as_json_object
    return None  # a string, a list of strings, or no default: any text goes


def _as_workers(value: str) -> object:
    """``FEEDCENSUS_WORKERS`` read as the pipeline reads it (the document code imported only when -s names it)."""
    from pipelines.document.jobs import workers_setting

    return workers_setting(value)


#: Settings whose values are not judged by their default's type.
OWN_TYPES: dict[str, tuple[str, Callable[[str], object]]] = {
    "FEEDCENSUS_WORKERS": ("a whole number or auto", _as_workers),
}


def value_problem(key: str, value: Any, default: Any) -> str | None:
    """What is wrong with ``value`` for setting ``key`` whose default is ``default``, in words (None: nothing).
    A text value (from a command line) is read as the setting will be; a typed one (from code, a job's
    settings) must already be of the default's type."""
    expected = OWN_TYPES.get(key) or expected_type(default)
    if expected is None or value is None:
        return None
    words, check = expected
    if isinstance(value, str):
        try:
            check(value)
        except (ValueError, TypeError):
            return f"{key} takes {words}, not {value!r}"
        text = value
    else:
        if check is _as_bool and not isinstance(value, bool | int):
            return f"{key} takes {words}, not {value!r}"
        if check is _as_number and (isinstance(value, bool) or not isinstance(value, int | float)):
            return f"{key} takes {words}, not {value!r}"
        if check is _as_number and not math.isfinite(value):
            return f"{key} takes {words}, not {value!r}"
        text = str(value)
    if check is _as_number and (least := floor_problem(key, text)) is not None:
        return f"{key} takes {least}, not {value!r}"
    return None


def unknown_name_problem(key: str, known: Iterable[str]) -> str | None:
    """A ``FEEDCENSUS_`` name no setting has (every one of ours has a default): a typo, with the nearest."""
    names = set(known)
    if not key.startswith("FEEDCENSUS_") or key in names:
        return None
    prefix = len("FEEDCENSUS_")
    near = difflib.get_close_matches(key[prefix:], [n[prefix:] for n in names if n.startswith("FEEDCENSUS_")], n=1)
    hint = f" (did you mean FEEDCENSUS_{near[0]}?)" if near else " (README.md lists them)"
    return f"no feedcensus setting is named {key}{hint}"


def settings_problem(settings: Any, defaults: Any) -> str | None:
    """The first problem of the settings given above the project's (a command line, a spider, a job's):
    each against its default in ``defaults`` (the project's settings); None when there is none."""
    from scrapy.settings import SETTINGS_PRIORITIES

    project = SETTINGS_PRIORITIES["project"]
    for name in sorted(settings.attributes):
        if (settings.getpriority(name) or 0) <= project:
            continue
        if name.startswith("FEEDCENSUS_") and name not in defaults:
            return unknown_name_problem(name, defaults.attributes)
        problem = value_problem(name, settings.get(name), defaults.get(name))
        if problem is not None:
            return problem
    return None
