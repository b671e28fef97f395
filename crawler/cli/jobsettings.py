"""A distributed job's settings travel with the job.

The process that starts a job on a frontier (``crawl``, ``replay`` or ``commoncrawl`` with
``--frontier``) puts the settings it runs with into the job (:func:`share`): every setting whose value
differs from the project's (``crawler/settings.py``), from ``-s``, a flag or the command's own mode.
A ``feedcensus worker`` joins with ``--frontier``, ``--job`` and ``--out`` alone and runs with them
(:func:`join`); a worker's own setting that contradicts the job is refused in one line (exit 2), so
no worker crawls with another budget, another robots.txt rule or another census than the job's.

Some settings belong to the process, not the job, and may differ from worker to worker (the machine
it runs on, its logs, its paths): :data:`PROCESS_SETTINGS` and :data:`PROCESS_PREFIXES`.
"""

from __future__ import annotations

import json
import os
from typing import Any, Final

from crawler.cli.errors import fail

#: Settings of one process: its capacity, its paths, its identity in the job. They never travel.
PROCESS_SETTINGS: Final = frozenset(
    {
        "CONCURRENT_REQUESTS",  # what this machine can hold in flight (a host's share is the job's)
        "FEEDCENSUS_WORKERS",  # document worker processes: this machine's cores
        "FEEDCENSUS_OUT",
        "FEEDCENSUS_JOB_ID",
        "FEEDCENSUS_WORKER_ID",
        "FEEDCENSUS_RESUME_DIR",
        "FEEDCENSUS_WARC_DIR",
        "FEEDCENSUS_REPLAY",  # the replay's archive index, read by each process (the paths travel: REPLAY_KEY)
        "FEEDCENSUS_FLUSH_SECONDS",
        "REACTOR_THREADPOOL_MAXSIZE",
    }
)
PROCESS_PREFIXES: Final = ("LOG_", "FEEDCENSUS_FRONTIER", "MEMUSAGE_", "TELNETCONSOLE", "STATS_", "FEEDCENSUS_PROGRESS")
#: The job's archives, for a ``replay --frontier`` job: its workers serve responses from the same WARC files.
REPLAY_KEY: Final = "--replay"


def is_process_setting(name: str) -> bool:
    return name in PROCESS_SETTINGS or name.startswith(PROCESS_PREFIXES)


def _plain(value: Any) -> Any:
    from scrapy.settings import BaseSettings

    return value.copy_to_dict() if isinstance(value, BaseSettings) else value


def job_settings(settings: Any, baseline: Any) -> dict[str, Any]:
    """The settings of the job ``settings`` runs: those that differ from ``baseline`` (the project's), but
    the process's own (:func:`is_process_setting`) and values that are not plain data."""
    shared: dict[str, Any] = {}
    for name in sorted(settings.attributes):
        if is_process_setting(name):
            continue
        # settings[name], not .get(name): Scrapy's get warns on reading a deprecated name (DNS_RESOLVER), and
        # every name is read here, so every distributed crawl printed that warning.
        value = _plain(settings[name])
        if value == _plain(baseline[name]):
            continue
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue
        shared[name] = value
    return shared


def same_value(a: Any, b: Any) -> bool:
    """Whether two values of a setting say the same (``0.5`` and ``.5``, ``True`` and ``"true"``)."""
    if a == b or str(a) == str(b):
        return True
    for read in (float, _as_bool):
        try:
            if read(a) == read(b):
                return True
        except (TypeError, ValueError):
            continue
    return False


def _as_bool(value: Any) -> bool:
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", "none", ""):
        return False
    raise ValueError(value)


def share(frontier_url: str, job: str, settings: Any, baseline: Any, replay: list[str] | None = None) -> None:
    """Put the job's settings into the job (the process that starts it). A job already there with other
    settings (started before by another command) is refused in one line."""
    from crawler.frontier import Frontier, FrontierError

    ours = job_settings(settings, baseline)
    if replay:
        ours[REPLAY_KEY] = [os.path.abspath(path) for path in replay]
    try:
        frontier = Frontier.connect(frontier_url, job)
        try:
            theirs = frontier.share_settings(ours)
        finally:
            frontier.close()
    except FrontierError as exc:
        raise fail(str(exc)) from None
    differ = sorted(
        name
        for name in set(ours) | set(theirs)
        if name != REPLAY_KEY
        and not same_value(ours.get(name, baseline.get(name)), theirs.get(name, baseline.get(name)))
    )
    if differ:
        name = differ[0]
        raise fail(
            f"job {job} runs with {name}={_shown(theirs.get(name, baseline.get(name)))}, not "
            f"{_shown(ours.get(name, baseline.get(name)))}: its settings were fixed when it started; "
            "start a new job (another --job-id) to crawl with other settings"
        )


def join(frontier_url: str, job: str, settings: Any, baseline: Any) -> list[str] | None:
    """Run a worker with the job's settings: set each in ``settings`` (the worker's, its command line
    applied). One the worker's command line set to another value, or a job setting it changed from the
    project's, is refused in one line. Returns the job's archives for a replay job (None otherwise)."""
    from crawler.frontier import Frontier, FrontierError

    try:
        frontier = Frontier.connect(frontier_url, job)
        try:
            theirs = frontier.job_settings()
        finally:
            frontier.close()
    except FrontierError as exc:
        raise fail(str(exc)) from None
    if theirs is None:  # a job started by an older feedcensus: the worker's own settings, as before
        return None
    from scrapy.settings import SETTINGS_PRIORITIES

    cmdline = SETTINGS_PRIORITIES["cmdline"]  # what the worker's command line set (-s, flags)
    for name in sorted(settings.attributes):
        if is_process_setting(name) or (settings.getpriority(name) or 0) < cmdline:
            continue
        mine = _plain(settings.get(name))
        wanted = theirs.get(name, _plain(baseline.get(name)))
        if not same_value(mine, wanted):
            raise fail(
                f"{name}={_shown(mine)}: job {job} runs with {name}={_shown(wanted)}; a worker runs with its "
                f"job's settings (leave {name} out of this worker's command line)"
            )
    for name, value in theirs.items():
        if name != REPLAY_KEY:
            settings.set(name, value, priority="cmdline")
    archives = theirs.get(REPLAY_KEY)
    return [str(path) for path in archives] if isinstance(archives, list) else None


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."
