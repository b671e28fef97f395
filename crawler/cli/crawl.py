"""``feedcensus crawl`` and ``feedcensus demo``: checks before crawling, the crawl, its summary and exit code.

Before the first request: the ``-s`` values are checked against the types of
the settings' defaults, a ``--resume`` folder is read (it fixes the job, the
output, the inputs and every option) or prepared, input files are read and
inputs that cannot be fetched at all are refused when nothing else is left.

During the crawl the terminal shows warnings, errors and the progress line;
Scrapy's INFO lines (settings, components, the stats dump) go to
``--log-file`` or show with ``--log-level INFO``. At the end the summary is
printed once, and the exit code says how the crawl went (``crawler.cli.errors``).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import logging
import math
import os
import re
import shlex
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.cli.errors import (
    EXIT_DATASET,
    EXIT_FRONTIER,
    EXIT_INTERRUPTED,
    EXIT_NOTHING_FETCHED,
    EXIT_OK,
    EXIT_USAGE,
    fail,
)

if TYPE_CHECKING:
    from crawler.fetch.inputs import Inputs

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
USABLE_OUTCOMES = ("feed", "page", "opml", "not_modified", "not_due")
#: What the terminal shows unless --log-level (or -s LOG_LEVEL) says otherwise.
DEFAULT_TERMINAL_LEVEL = logging.WARNING
#: Scrapy's log format, for the terminal and the log file alike.
LOG_FORMAT = "%(asctime)s [%(name)s] %(levelname)s: %(message)s"
LOG_DATEFORMAT = "%Y-%m-%d %H:%M:%S"


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


# --- inputs ----------------------------------------------------------------------------------

#: A value without a scheme that starts like a host: ``127.0.0.1:8765/feed.xml``, ``example.com/feed``.
_HOST_FIRST = re.compile(
    r"^(?P<host>localhost|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)"
    r"(?P<port>:\d+)?(?P<rest>[/?#].*)?$"
)


def scheme_hint(value: str) -> str:
    """``"; did you mean http://VALUE?"`` when ``value`` has no scheme and starts like a host; else ``""``."""
    m = _HOST_FIRST.match(value)
    if "://" in value or m is None:
        return ""
    if not (m["port"] or m["rest"] or m["host"] == "localhost" or m["host"][0].isdigit() or m["host"][0] == "["):
        return ""  # "list.opml" is a file name more likely than a host
    return f"; did you mean http://{value}?"


def is_local_opml(item: str) -> bool:
    return "://" not in item or item.startswith("file://")


def check_seeds_file(path: str) -> None:
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise fail(f"cannot read seeds file {path}: {exc.strerror or exc}") from None


def check_local_opml(path: str) -> None:
    from crawler.fetch.opml import parse_opml

    try:
        body = Path(path).read_bytes()
    except OSError as exc:
        raise fail(f"cannot read OPML file {path}: {exc.strerror or exc}{scheme_hint(path)}") from None
    doc = parse_opml(body, Path(path).resolve().as_uri())
    if not doc.ok:
        raise fail(f"{path}: {doc.error}")


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


def check_inputs(args: argparse.Namespace, settings: Any) -> Inputs:
    """Refuse, before crawling, what cannot run: no output, no input, unreadable files, no usable input;
    the inputs as read (the crawl's spider is given them, not reading them again)."""
    if not args.out:
        raise fail("--out is required")
    if not (args.seeds or args.opml or args.url):
        raise fail("nothing to crawl: give --seeds FILE, --opml FILE_OR_URL or --url URL")
    return check_given_inputs(args, settings)


def check_given_inputs(args: argparse.Namespace, settings: Any) -> Inputs:
    """Refuse inputs given on the command line that cannot run: unreadable files, no usable URL; the inputs read."""
    for path in args.seeds or []:
        check_seeds_file(path)
    for item in args.opml or []:
        if is_local_opml(item):
            check_local_opml(item.removeprefix("file://"))
    return check_usable(args, settings.getint("FEEDCENSUS_MAX_URL_LENGTH"))


def check_usable(args: argparse.Namespace, max_url_length: int) -> Inputs:
    """Exit 2 when no input can be fetched at all; a line for each unusable one given on the command line;
    the inputs read. They are those of ``args`` only: a replay's seeds given as lists (``seed_lists``) are
    not among them, so a replay lets its spider read its inputs itself."""
    from crawler.fetch.inputs import read_inputs
    from crawler.fetch.urls import check_url
    from crawler.fetch.words import counted

    inputs = read_inputs(args.seeds or [], args.opml or [], args.url or [])
    usable = len(inputs.local_opml)
    unusable = [(rec.url, rec.error or str(rec.outcome)) for rec in inputs.problems]
    named = {*(args.url or []), *(args.opml or [])}
    for url, _ in inputs.requests:
        if usable and url not in named:
            continue  # one usable input is enough to start; the spider judges the rest as it requests them
        refusal = check_url(url, max_url_length)
        if refusal is None:
            usable += 1
        else:
            unusable.append((url, refusal.reason))
    if not usable:
        if not unusable:
            raise fail("nothing to crawl: the inputs name no URL")
        url, reason = unusable[0]
        more = f" (and {counted(len(unusable) - 1, 'more unusable input')})" if len(unusable) > 1 else ""
        raise fail(f"nothing to crawl: {shown_input(url)}: {reason}{scheme_hint(url)}{more}")
    for url, reason in unusable:
        if url in named:
            print(f"feedcensus crawl: skipping {shown_input(url)}: {reason}{scheme_hint(url)}", file=sys.stderr)
    return inputs


def shown_input(text: str, limit: int = 200) -> str:
    """An input as an error line shows it: control characters escaped (a binary seeds file's bytes put
    them on the terminal), and at most ``limit`` characters of it (a 9,000-character URL was shown whole)."""
    escaped = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return escaped if len(escaped) <= limit else f"{escaped[:limit]}... ({len(text):,} characters)"


# --- resume ----------------------------------------------------------------------------------


def _resolve_out(out: str) -> str:
    return out if "://" in out else os.path.abspath(out)


def _resolve_opml(item: str) -> str:
    return os.path.abspath(item.removeprefix("file://")) if is_local_opml(item) else item


def resolved(seeds: Sequence[str], opml: Sequence[str], out: str | None) -> tuple[list[str], list[str], str | None]:
    """Local paths made absolute: a resume from another folder reads the same files and writes the same output."""
    return [os.path.abspath(p) for p in seeds], [_resolve_opml(i) for i in opml], _resolve_out(out) if out else out


def options_of(args: argparse.Namespace) -> dict[str, Any]:
    """Every option of a crawl that a resume uses again."""
    options: dict[str, Any] = {flag: bool(getattr(args, flag)) for flag in FLAG_SETTINGS}
    log_file = getattr(args, "log_file", None)
    options.update(
        log_level=args.log_level, log_file=os.path.abspath(log_file) if log_file else None, set=list(args.set or [])
    )
    options.update({option: getattr(args, option, None) for option in INTERVAL_SETTINGS})
    warc = getattr(args, "warc", None)
    options["warc"] = os.path.abspath(warc) if warc else None
    return options


def resume_args(args: argparse.Namespace) -> dict[str, Any] | None:
    """With --resume: a new folder gets this run's state (returned, written once the inputs are checked);
    an existing one fixes the job, output, inputs and options, and explicit ones must agree with it."""
    from crawler.extensions.resume import ResumeError, read_state
    from pipelines.writer import default_job_id

    try:
        state = read_state(args.resume)
    except ResumeError as exc:
        raise fail(str(exc)) from None
    args.seeds, args.opml, args.out = resolved(args.seeds or [], args.opml or [], args.out)
    args.url = list(args.url or [])
    if state is None:
        if not args.out:  # most likely a mistyped folder of a crawl to resume
            raise fail(
                f"--resume {args.resume}: no crawl to resume there (no state.json); "
                "to start a resumable crawl, give --out and its inputs too"
            )
        args.job_id = args.job_id or default_job_id()
        keys = ("job_id", "out", "seeds", "opml", "url")
        return {**{k: getattr(args, k) for k in keys}, "options": options_of(args)}
    seeds, opml, out = resolved(state["seeds"], state["opml"], state["out"])
    check_same_job(args, state["job_id"], out, [seeds, opml, state["url"]])
    saved = state.get("options") or {}
    check_same_options(args, saved)
    args.job_id, args.out, args.seeds, args.opml, args.url = state["job_id"], out, seeds, opml, list(state["url"])
    apply_options(args, saved)
    print(f"resuming job {args.job_id} into {args.out}", file=sys.stderr)
    return None


def check_same_job(args: argparse.Namespace, job_id: str, out: str | None, inputs: list[list[str]]) -> None:
    if args.job_id and args.job_id != job_id:
        raise fail(f"{args.resume} holds job {job_id}, not {args.job_id}")
    if args.out and args.out != out:
        raise fail(f"{args.resume} writes to {out}, not {args.out}")
    given = [args.seeds, args.opml, args.url]
    if any(given) and given != inputs:
        raise fail(f"{args.resume} was started with other inputs; resume it without giving inputs")


def check_same_options(args: argparse.Namespace, saved: dict[str, Any]) -> None:
    """Refuse explicit options the job was not started with (a flag it lacked, a setting it had otherwise)."""
    for flag in FLAG_SETTINGS:
        if getattr(args, flag) and not saved.get(flag):
            option = "--" + flag.replace("_", "-")
            raise fail(f"{args.resume} holds a job started without {option}; resume it without {option}")
    for option in INTERVAL_SETTINGS:
        given = getattr(args, option, None)
        if given and given != saved.get(option):
            name = "--" + option.replace("_", "-")
            raise fail(
                f"{args.resume} holds a job started with {name} {saved.get(option) or '(default)'}; resume it without {name}"
            )
    warc = getattr(args, "warc", None)
    if warc and os.path.abspath(warc) != saved.get("warc"):
        raise fail(
            f"{args.resume} holds a job started with --warc {saved.get('warc') or '(none)'}; resume it without --warc"
        )
    saved_set = dict(kv.partition("=")[::2] for kv in saved.get("set") or [])
    for kv in args.set or []:
        key, _, value = kv.partition("=")
        if saved_set.get(key) != value:
            was = f"with -s {key}={saved_set[key]}" if key in saved_set else f"without -s {key}"
            raise fail(f"{args.resume} holds a job started {was}; resume it without -s {key}")


def apply_options(args: argparse.Namespace, saved: dict[str, Any]) -> None:
    """The saved options; --log-level and --log-file given now win (they change what is shown, not the data)."""
    for flag in FLAG_SETTINGS:
        setattr(args, flag, bool(saved.get(flag)))
    args.set = list(saved.get("set") or [])
    for option in INTERVAL_SETTINGS:
        setattr(args, option, saved.get(option))
    args.log_level = args.log_level or saved.get("log_level")
    args.log_file = args.log_file or saved.get("log_file")
    args.warc = saved.get("warc")


# --- logging ---------------------------------------------------------------------------------


def _level(value: Any, what: str) -> int:
    level = value if isinstance(value, int) else logging.getLevelName(str(value).upper())
    if not isinstance(level, int):
        raise fail(f"{what} takes DEBUG, INFO, WARNING or ERROR, not {value!r}")
    return level


class TerminalFilter(logging.Filter):
    """What the terminal shows: records at its level and the progress lines, never the summary records.

    The command prints the summary itself, once.
    """

    def __init__(self, level: int) -> None:
        from crawler.extensions.progress import SUMMARY_LOGGER
        from crawler.extensions.progress import logger as progress_logger

        super().__init__()
        self.level = level
        self.summary, self.progress = SUMMARY_LOGGER, progress_logger.name

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == self.summary:
            return False
        return record.levelno >= self.level or record.name == self.progress


class OneLineFormatter(logging.Formatter):
    """Scrapy's log format; a record with an exception is one line naming it, without the traceback.

    (Scrapy puts some tracebacks in the message itself: only its first line is kept.)
    """

    def format(self, record: logging.LogRecord) -> str:
        exc_info, exc_text = record.exc_info, record.exc_text
        exc = exc_info[1] if exc_info else None
        if exc is None:
            return super().format(record)
        record.exc_info = record.exc_text = None  # exc_text is cached on the record: other handlers share it
        try:
            line = super().format(record).splitlines()[0]
        finally:
            record.exc_info, record.exc_text = exc_info, exc_text
        name = type(exc).__name__
        return line if name in line else f"{line} ({name}: {' '.join(str(exc).split())})"


class EngineErrors(logging.Handler):
    """Remembers the first exceptions Scrapy's engine and its signal handlers logged: the crawl did not run as asked."""

    ENGINE = "scrapy.core.engine"
    SIGNALS = "scrapy.utils.signal"

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        #: The first exception logged by the engine itself (it may then fail with one of its own).
        self.engine: BaseException | None = None
        #: The first exception logged by the engine or a signal handler.
        self.first: BaseException | None = None

    def emit(self, record: logging.LogRecord) -> None:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is None or not record.name.startswith((self.ENGINE, self.SIGNALS)):
            return
        if self.engine is None and record.name.startswith(self.ENGINE):
            self.engine = exc
        if self.first is None:
            self.first = exc


def terminal_level(settings: Any) -> int:
    """``--log-level`` or ``-s LOG_LEVEL`` (both set LOG_LEVEL from the command line), else warnings."""
    from scrapy.settings import SETTINGS_PRIORITIES

    if (settings.getpriority("LOG_LEVEL") or 0) >= SETTINGS_PRIORITIES["cmdline"]:
        return _level(settings.get("LOG_LEVEL"), "--log-level")
    return DEFAULT_TERMINAL_LEVEL


def log_handlers(settings: Any, log_file: str | None) -> list[logging.Handler]:
    """The terminal's handler and, with a log file, the file's (at LOG_LEVEL, tracebacks kept)."""
    level = terminal_level(settings)
    terminal = logging.StreamHandler(sys.stderr)
    terminal.addFilter(TerminalFilter(level))
    formatter = logging.Formatter if level <= logging.DEBUG else OneLineFormatter
    terminal.setFormatter(formatter(LOG_FORMAT, LOG_DATEFORMAT))
    handlers: list[logging.Handler] = [terminal]
    if log_file:
        try:
            to_file = logging.FileHandler(log_file, encoding="utf-8")
        except OSError as exc:
            raise fail(f"cannot write the log file {log_file}: {exc.strerror or exc}") from None
        to_file.setLevel(_level(settings.get("LOG_LEVEL"), "LOG_LEVEL"))
        to_file.setFormatter(logging.Formatter(LOG_FORMAT, LOG_DATEFORMAT))
        handlers.append(to_file)
    return handlers


@contextlib.contextmanager
def crawl_logging(settings: Any, log_file: str | None) -> Iterator[EngineErrors]:
    """Log handlers on the root logger for the crawl; yields what remembers errors inside the engine."""
    errors = EngineErrors()
    handlers = [*log_handlers(settings, log_file), errors]
    root = logging.getLogger()
    before = root.level
    # Low enough for each handler, and for the progress lines (INFO) shown when stderr is not a terminal.
    files = [h.level for h in handlers if isinstance(h, logging.FileHandler)]
    root.setLevel(min(logging.INFO, terminal_level(settings), *files))
    for handler in handlers:
        root.addHandler(handler)
    try:
        yield errors
    finally:
        for handler in handlers:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(before)


# --- the crawl -------------------------------------------------------------------------------


@dataclass
class CrawlResult:
    """How a crawl went: its final stats and what the exit code depends on."""

    stats: dict[str, Any]
    elapsed: float
    #: Stopped by Ctrl-C, SIGINT or SIGTERM.
    interrupted: bool = False
    #: Stopped by a second signal before it could close (the stats say what was committed).
    forced: bool = False
    #: The first exception logged inside Scrapy's engine.
    engine_error: BaseException | None = None
    #: URLs the job had committed before this run (a resume).
    already_written: int = 0


def run_crawl(
    settings: Any,
    errors: EngineErrors | None = None,
    *,
    seeds: Sequence[str] = (),
    opml: Sequence[str] = (),
    urls: Sequence[str] = (),
    spider: type[Any] | None = None,
    **spider_args: Any,
) -> CrawlResult:
    """Run the census spider (or ``spider``, a subclass, with ``spider_args``) to the end (or an
    interruption); say how it went."""
    from scrapy.crawler import CrawlerProcess

    from crawler.extensions.progress import Progress
    from crawler.spiders.census import CensusSpider
    from pipelines.dataset.nopandas import pyarrow_without_pandas

    started = time.monotonic()
    pyarrow_without_pandas()  # the dataset's commits convert plain values only: 0.25-0.4 s and 35 MiB saved
    process = CrawlerProcess(settings)
    logging.getLogger("scrapy").setLevel(logging.NOTSET)  # Scrapy says DEBUG; the handlers choose what is shown
    crawler = process.create_crawler(spider or CensusSpider)
    failures: list[Any] = []
    inputs = {"seeds": list(seeds), "opml": list(opml), "url": list(urls), **spider_args}
    process.crawl(crawler, **inputs).addErrback(failures.append)
    process.start()
    # What is printed next (the summary, an error) starts on a line of its own, after a forced stop too.
    with contextlib.suppress(RuntimeError):  # no extensions: the crawler failed before making them
        if (progress := crawler.get_extension(Progress)) is not None:
            progress.stop()
    if failures:
        raise crawl_failure(failures[0].value, errors)
    return crawl_result(crawler, errors, time.monotonic() - started)


def crawl_failure(exc: BaseException, errors: EngineErrors | None) -> Exception:
    from crawler.middlewares.netsafety import NetworkGuardError
    from pipelines.writer import DatasetError

    if isinstance(exc, DatasetError | NetworkGuardError):
        return fail(str(exc))
    # An error the engine logged comes first: what the crawl then fails with may be its consequence.
    real = errors.engine if errors is not None and errors.engine is not None else exc
    return fail(f"the crawl could not run: {type(real).__name__}: {real}")


def crawl_result(crawler: Any, errors: EngineErrors | None, elapsed: float) -> CrawlResult:
    from pipelines.writer import Dataset

    dataset = crawler.get_extension(Dataset)
    forced = dataset is not None and not dataset.closed
    if dataset is not None:
        dataset.settle()  # after a forced stop: the commit in flight ends, the stats say what was committed
    stats = crawler.stats.get_stats() if crawler.stats else {}
    return CrawlResult(
        stats=stats,
        elapsed=float(stats.get("elapsed_time_seconds") or elapsed),
        interrupted=forced or stats.get("finish_reason") == "shutdown",
        forced=forced,
        engine_error=errors.first if errors is not None else None,
        already_written=len(dataset.done) if dataset is not None else 0,
    )


def crawl(args: argparse.Namespace, settings: Any, **inputs: Any) -> CrawlResult:
    """The crawl with its log handlers; a third Ctrl-C while the data settles interrupts at once."""
    import signal

    with crawl_logging(settings, getattr(args, "log_file", None) or settings.get("LOG_FILE")) as errors:
        try:
            return run_crawl(settings, errors, **inputs)
        finally:
            # Scrapy ignores SIGINT after the second: let a third one end the wait for a stuck commit.
            signal.signal(signal.SIGINT, signal.default_int_handler)


# --- the end ---------------------------------------------------------------------------------


def print_summary(result: CrawlResult, settings: Any) -> None:
    from crawler.extensions.progress import clock, summary_lines

    stats = result.stats
    for line in summary_lines(stats, settings.get("FEEDCENSUS_OUT"), settings.get("FEEDCENSUS_JOB_ID")):
        print(line, file=sys.stderr)
    if result.forced:
        lost = stats.get("feedcensus/rows_not_written", 0)
        print(f"not written: {lost} rows fetched after the last commit (forced to stop)", file=sys.stderr)
    reason = "interrupted" if result.interrupted else str(stats.get("finish_reason") or "finished")
    print(f"{reason} in {clock(result.elapsed)}", file=sys.stderr)


def start_frontier(url: str, settings: Any, replay: list[str] | None = None) -> None:
    """Before a distributed job starts: the password warning, the frontier checked, the job's settings put
    into the job (its workers run with them: crawler/cli/jobsettings.py), the workers' command shown."""
    from crawler.cli import jobsettings

    job = settings.get("FEEDCENSUS_JOB_ID")
    warn_password(url)
    check_frontier(url, job)
    jobsettings.share(url, job, settings, project_settings(), replay)
    print(f"distributed job {job}: more workers join with {worker_command(settings)}", file=sys.stderr)


def report_end(
    result: CrawlResult, args: argparse.Namespace, settings: Any, command: str, *, extra: str = "", worker: bool = False
) -> int:
    """The end of a crawling command: the summary (and ``extra``), the line explaining the exit code; the code."""
    print_summary(result, settings)
    if extra:
        print(extra, file=sys.stderr)
    code, line = exit_status(result, args, settings, worker=worker)
    if line:
        print(f"feedcensus {command}: {' '.join(line.split())}", file=sys.stderr)
    return code


def worker_command(settings: Any) -> str:
    """The command that joins this distributed job, as it may be shown (the password left out of the URL).
    A worker needs no settings: the job's travel with it."""
    from crawler.frontier import PASSWORD_ENV, has_password, shareable_url

    url = str(settings.get("FEEDCENSUS_FRONTIER"))
    job, out = str(settings.get("FEEDCENSUS_JOB_ID")), str(settings.get("FEEDCENSUS_OUT"))
    command = f"feedcensus worker --frontier {shlex.quote(shareable_url(url))} --job {shlex.quote(job)} --out {shlex.quote(out)}"
    if has_password(url) or os.environ.get(PASSWORD_ENV):
        command += f" (with the password in {PASSWORD_ENV})"
    return command


def warn_password(url: str) -> None:
    """A password on the command line is in the process list for every user of the machine: say so."""
    from crawler.frontier import PASSWORD_ENV, has_password

    if has_password(url):
        print(
            f"feedcensus: warning: the frontier URL carries a password, which every user of this machine can read "
            f"in the process list; put it in {PASSWORD_ENV} instead",
            file=sys.stderr,
        )


def resume_command(args: argparse.Namespace, settings: Any) -> str:
    if getattr(args, "frontier", None):
        return f"go on with: {worker_command(settings)}"
    if getattr(args, "resume", None):
        return f"resume with: feedcensus crawl --resume {shlex.quote(args.resume)}"
    return "a crawl started with --resume DIR can be resumed"


def exit_status(
    result: CrawlResult, args: argparse.Namespace, settings: Any, *, worker: bool = False
) -> tuple[int, str | None]:
    """The exit code and the last line that explains it (None for a crawl that went as asked).

    A ``worker`` that joined late may have found nothing left to fetch: that is no failure (one
    whose every request failed is).
    """
    stats = result.stats
    out, job = settings.get("FEEDCENSUS_OUT"), settings.get("FEEDCENSUS_JOB_ID")
    if stats.get("feedcensus/dataset_error"):
        lost = stats.get("feedcensus/rows_lost", 0)
        return EXIT_DATASET, f"{stats['feedcensus/dataset_error']}; {lost} rows were not written"
    if stats.get("feedcensus/history_error"):  # pipelines/history.py: the earlier jobs could not be read
        return EXIT_USAGE, f"{stats['feedcensus/history_error']}; the crawl stopped before it began"
    if stats.get("feedcensus/warc_error"):
        return EXIT_DATASET, f"{stats['feedcensus/warc_error']}; the crawl stopped there"
    if stats.get("feedcensus/frontier_error"):
        # The job's state gone from Redis (crawler/frontier/: JobGone): no worker can go on with it.
        then = (
            "the job cannot go on: start it again, under a new --job-id to keep its rows apart from these"
            if stats.get("feedcensus/frontier/job_gone")
            else None
        )
        return EXIT_FRONTIER, (
            f"{stats['feedcensus/frontier_error']}; what was committed to {out} (job {job}) stays; "
            f"{then or resume_command(args, settings)}"
        )
    if result.engine_error is not None:
        exc = result.engine_error
        return EXIT_USAGE, f"the crawl failed: {type(exc).__name__}: {exc}"
    if result.interrupted:
        from crawler.fetch.words import counted

        files = stats.get("feedcensus/files_written", 0)
        return (
            EXIT_INTERRUPTED,
            f"interrupted; {counted(files, 'file')} committed to {out} (job {job}); {resume_command(args, settings)}",
        )
    fetched = sum(stats.get(f"feedcensus/outcome/{o}", 0) for o in USABLE_OUTCOMES)
    took_work = not worker or stats.get("feedcensus/frontier/leased", 0) > 0
    if not fetched and not result.already_written and took_work:
        return EXIT_NOTHING_FETCHED, "nothing usable was fetched: every input failed (fetch_log says why)"
    return EXIT_OK, None


def cmd_crawl(args: argparse.Namespace) -> int:
    settings = checked_settings(args)  # a bad -s or interval is found before a resume state is written
    if args.resume and args.frontier:
        raise fail(
            "--resume and --frontier: a distributed job's state is its frontier; run `feedcensus worker` to go on"
        )
    new_state = resume_args(args) if args.resume else None
    inputs = check_inputs(args, settings)
    if new_state is not None:
        from crawler.extensions.resume import write_state

        try:
            write_state(args.resume, new_state)
        except OSError as exc:  # a file in the way, a read-only disk...
            raise fail(f"--resume {args.resume}: cannot keep the job's state there: {exc.strerror or exc}") from None
    settings = crawl_settings(args, settings)
    if args.frontier:
        start_frontier(args.frontier, settings)
    result = crawl(args, settings, seeds=args.seeds or [], opml=args.opml or [], urls=args.url or [], inputs=inputs)
    return report_end(result, args, settings, "crawl")


# --- demo ------------------------------------------------------------------------------------

DEAD_ENDS = (
    "the demo web has dead ends on purpose (crawler/demo/web/README.md): a 500, a 404, a 410, a redirect loop,\n"
    "HTML served as RSS and a feed robots.txt denies (the errors below), and an OPML list that is not well-formed"
)


def demo_report(out: str, job: str) -> Path:
    """The survey of the demo's job as a report folder; the path of its HTML page."""
    from crawler.report.survey import SurveyError, run

    report = Path(out) / "report"
    try:
        run(out, job=job, report_dir=str(report))
    except SurveyError as exc:
        raise fail(str(exc)) from None
    index = report / "index.html"
    if not index.exists():  # the survey names its page survey.html; the demo's report opens at index.html
        shutil.copyfile(report / "survey.html", index)
    return index


def cmd_demo(args: argparse.Namespace) -> int:
    from crawler.demo.folder import read_demo_web, start_demo_web, write_demo_web
    from crawler.demo.webserver import demo_seeds

    out = args.out
    work = Path(out)
    # The folder remembers the port and the demo day of its first demo: a second demo into it is a
    # re-crawl of the same URLs and bytes (crawler/demo/folder.py).
    remembered, unusable = read_demo_web(work)
    server, web, taken = start_demo_web(remembered)
    with server:
        seeds_file = work / "demo-seeds.txt"
        try:
            work.mkdir(parents=True, exist_ok=True)
            seeds_file.write_text("\n".join(demo_seeds(server.url)) + "\n", encoding="utf-8")
            write_demo_web(work, web)
        except OSError as exc:  # a file in the way, a read-only disk...
            raise fail(f"--out {out}: cannot write there: {exc.strerror or exc}") from None
        again = ""
        if remembered is not None and not taken:  # its dates are the first demo's: say so, they may be old by now
            again = f", as for the earlier demo into {out} (a re-crawl; dated for {web.day}, a new --out for today)"
        print(f"demo web serving at {server.url}{again}", file=sys.stderr)
        print(DEAD_ENDS, file=sys.stderr)
        for note in (unusable, taken):
            if note:
                print(f"feedcensus demo: {note}", file=sys.stderr)
        ns = argparse.Namespace(
            out=out,
            job_id=args.job_id,
            resume=None,
            log_level=args.log_level,
            log_file=None,
            set=["AUTOTHROTTLE_ENABLED=False", "ROBOTSTXT_OBEY=True", "CONCURRENT_REQUESTS_PER_DOMAIN=8"],
            **dict.fromkeys(FLAG_SETTINGS, False),
        )
        settings = crawl_settings(ns)
        result = crawl(ns, settings, seeds=[str(seeds_file)])
        print_summary(result, settings)
    code, line = exit_status(result, ns, settings)
    if line:
        print(f"feedcensus demo: {' '.join(line.split())}", file=sys.stderr)
        return code
    report = demo_report(out, settings.get("FEEDCENSUS_JOB_ID"))
    print(f"dataset: {out}")
    print(f"report: {report}")
    return EXIT_OK
