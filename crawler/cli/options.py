"""The command line's settings: ``-s`` values checked against the types of the settings' defaults, the flags
and durations that set settings, the settings of a crawl on a frontier; each refusal one line, exit 2."""

from __future__ import annotations

import argparse
import difflib
import math
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from crawler.cli.errors import (
    fail,
)

if TYPE_CHECKING:
    pass


#: Crawl flags and the setting each one sets.
FLAG_SETTINGS: dict[str, tuple[str, bool]] = {
    "no_reflexive": ("FEEDCENSUS_REFLEXIVE", False),
    "no_pages": ("FEEDCENSUS_OPML_PAGES", False),
    "guess": ("FEEDCENSUS_GUESS", True),
    "follow_body_links": ("FEEDCENSUS_FOLLOW_BODY_LINKS", True),
    "head_only": ("FEEDCENSUS_FOLLOW_BODY_LINKS", False),  # after follow_body_links: --head-only wins
    "allow_private_networks": ("FEEDCENSUS_ALLOW_PRIVATE_NETWORKS", True),
    "ignore_hints": ("FEEDCENSUS_IGNORE_HINTS", True),
    "refetch": ("FEEDCENSUS_CONDITIONAL", False),  # no validators and nothing carried forward: all due
}
#: Duration options -> the setting (seconds) each sets.
INTERVAL_SETTINGS: dict[str, str] = {
    "min_interval": "FEEDCENSUS_MIN_INTERVAL",
    "max_interval": "FEEDCENSUS_MAX_INTERVAL",
}
#: fetch_log outcomes that mean an input gave something usable.

# --- settings ------------------------------------------------------------------------------


def project_settings() -> Any:
    os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "crawler.settings")
    from scrapy.utils.project import get_project_settings

    return get_project_settings()


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
    from pipelines.document.pool import workers_setting

    return workers_setting(value)


#: Settings whose values are not judged by their default's type.
OWN_TYPES: dict[str, tuple[str, Callable[[str], object]]] = {
    "FEEDCENSUS_WORKERS": ("a whole number or auto", _as_workers),
}


def parse_overrides(values: Sequence[str], settings: Any) -> list[tuple[str, str]]:
    """``-s NAME=VALUE`` pairs, each value checked against the type of the setting's default."""
    pairs = []
    for kv in values:
        key, sep, value = kv.partition("=")
        if not sep or not key:
            raise fail(f"-s takes NAME=VALUE, not {kv!r}")
        if key.startswith("FEEDCENSUS_") and key not in settings:  # every one of ours has a default: a typo
            prefix = len("FEEDCENSUS_")
            ours = [name[prefix:] for name in settings.attributes if name.startswith("FEEDCENSUS_")]
            near = difflib.get_close_matches(key[prefix:], ours, n=1)
            hint = f" (did you mean FEEDCENSUS_{near[0]}?)" if near else " (README.md lists them)"
            raise fail(f"-s {kv}: no feedcensus setting is named {key}{hint}")
        expected = OWN_TYPES.get(key) or expected_type(settings.get(key))
        if expected is not None:
            words, check = expected
            try:
                check(value)
            except (ValueError, TypeError):
                raise fail(f"-s {kv}: {key} takes {words}, not {value!r}") from None
            if check is _as_number and (least := floor_problem(key, value)) is not None:
                raise fail(f"-s {kv}: {key} takes {least}, not {value!r}")
        pairs.append((key, value))
    return pairs


def crawl_settings(args: argparse.Namespace, settings: Any = None) -> Any:
    """The project settings with the command line's: flags, ``--log-level``, ``-s`` (checked)."""
    settings = settings if settings is not None else project_settings()
    settings.set("FEEDCENSUS_OUT", args.out, priority="cmdline")
    from pipelines.writer import default_job_id

    # Named here, not when the writer opens, so the summary and a resume state can say it.
    settings.set("FEEDCENSUS_JOB_ID", args.job_id or default_job_id(), priority="cmdline")
    for flag, (name, flag_value) in FLAG_SETTINGS.items():
        if getattr(args, flag):
            settings.set(name, flag_value, priority="cmdline")
    for option, name in INTERVAL_SETTINGS.items():
        if getattr(args, option, None):
            settings.set(name, interval_seconds(getattr(args, option), option), priority="cmdline")
    if getattr(args, "resume", None):
        settings.set("FEEDCENSUS_RESUME_DIR", args.resume, priority="cmdline")
    if getattr(args, "frontier", None):
        frontier_settings(settings, args.frontier)
    if getattr(args, "warc", None):
        settings.set("FEEDCENSUS_WARC_DIR", check_warc_dir(args.warc), priority="cmdline")
    if args.log_level:
        settings.set("LOG_LEVEL", args.log_level, priority="cmdline")
    for key, value in parse_overrides(args.set or [], settings):
        settings.set(key, value, priority="cmdline")
    check_job_id(str(settings.get("FEEDCENSUS_JOB_ID")))  # also for callers that did not check it first
    # The command installs its own log handlers (the terminal and --log-file): see crawl_logging().
    settings.set("LOG_INSTALL_ROOT_HANDLER", False, priority="cmdline")
    if (settings.getpriority("USER_AGENT") or 0) < (settings.getpriority("FEEDCENSUS_CONTACT_URL") or 0):
        # The User-Agent names the contact URL in force, also one set with -s.
        settings.set("USER_AGENT", user_agent(settings.get("FEEDCENSUS_CONTACT_URL")), priority="cmdline")
    return settings


def frontier_settings(settings: Any, url: str) -> None:
    """A crawl process on a shared Redis frontier (docs/distributed.md). The spider adds the frontier's
    scheduler and extension for any crawl with FEEDCENSUS_FRONTIER (CensusSpider.update_settings)."""
    from crawler.extensions.workers import new_worker_id
    from crawler.frontier import display_url

    for name, value in (
        ("FEEDCENSUS_FRONTIER", url),
        ("FEEDCENSUS_FRONTIER_DISPLAY", display_url(url)),
        ("FEEDCENSUS_WORKER_ID", new_worker_id()),
        # A feed's channel page may be fetched by another worker, whose pipeline knows nothing of the
        # feed waiting for it: reflexive autodiscovery needs both in one process.
        ("FEEDCENSUS_REFLEXIVE", False),
    ):
        settings.set(name, value, priority="cmdline")


def check_warc_dir(path: str) -> str:
    """The --warc folder, made if needed; refused (one line, exit 2) before crawling when it cannot be written."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise fail(f"--warc {path}: cannot make the folder: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise fail(f"--warc {path}: cannot write there")
    return os.path.abspath(path)


def check_frontier(url: str, job: str) -> None:
    """Refuse a frontier that cannot be reached, before anything is crawled."""
    from crawler.frontier import Frontier, FrontierError

    try:
        Frontier.connect(url, job).close()
    except FrontierError as exc:
        raise fail(str(exc)) from None


def interval_seconds(value: str, option: str) -> float:
    """A --min-interval / --max-interval value in seconds; a usage error names the option."""
    from pipelines.dataset.schedule import parse_duration

    try:
        return parse_duration(value).total_seconds()
    except ValueError as exc:
        raise fail(f"--{option.replace('_', '-')}: {exc}") from None


def user_agent(contact_url: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("feedcensus")
    except PackageNotFoundError:
        ours = "dev"
    return f"feedcensus/{ours} (+{contact_url})"


def checked_settings(args: argparse.Namespace) -> Any:
    """The project settings, and the command line's ``-s`` and ``--min/--max-interval`` checked (exit 2 if bad)."""
    settings = project_settings()
    for key, value in parse_overrides(args.set or [], settings):
        if key == "FEEDCENSUS_JOB_ID":
            check_job_id(value)
        for flag, dest, name in (("--out", "out", "FEEDCENSUS_OUT"), ("--job-id", "job_id", "FEEDCENSUS_JOB_ID")):
            given = getattr(args, dest, None)
            if key == name and given and given != value:  # the later one silently won
                raise fail(f"{flag} {given} and -s {name}={value} name two different things: give one")
    check_job_id(getattr(args, "job_id", None))  # before a resume state or a frontier wait names it
    for option in INTERVAL_SETTINGS:
        if getattr(args, option, None):
            interval_seconds(getattr(args, option), option)
    return settings


def check_job_id(job: str | None) -> None:
    """Refuse (exit 2) a job id that cannot name the job's folders; None: the default, its start time."""
    from pipelines.writer import job_id_problem

    if job is not None and (problem := job_id_problem(job)) is not None:
        raise fail(f"job id {job[:120]!r}: {problem}")
