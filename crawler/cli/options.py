"""The command line's settings: ``-s`` values checked against the types of the settings' defaults, the flags
and durations that set settings, the settings of a crawl on a frontier; each refusal one line, exit 2."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

from crawler.cli.errors import fail
from crawler.settingchecks import unknown_name_problem, value_problem

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


def parse_overrides(values: Sequence[str], settings: Any) -> list[tuple[str, str]]:
    """``-s NAME=VALUE`` pairs, each value checked against the type of the setting's default
    (crawler/settingchecks.py: the same checks every crawl's ``SettingsCheck`` makes)."""
    pairs = []
    for kv in values:
        key, sep, value = kv.partition("=")
        if not sep or not key:
            raise fail(f"-s takes NAME=VALUE, not {kv!r}")
        problem = unknown_name_problem(key, settings.attributes) or value_problem(key, value, settings.get(key))
        if problem is not None:
            raise fail(f"-s {kv}: {problem}")
        pairs.append((key, value))
    return pairs


def crawl_settings(args: argparse.Namespace, settings: Any = None) -> Any:
    """The project settings with the command line's: flags, ``--log-level``, ``-s`` (checked)."""
    settings = settings if settings is not None else project_settings()
    settings.set("FEEDCENSUS_OUT", args.out, priority="cmdline")
    from pipelines.dataset.jobids import default_job_id

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
    from pipelines.dataset.jobids import job_id_problem

    if job is not None and (problem := job_id_problem(job)) is not None:
        raise fail(f"job id {job[:120]!r}: {problem}")
