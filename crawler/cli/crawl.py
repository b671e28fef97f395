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
import logging
import os
import re
import shlex
import sys
import time
from collections.abc import Sequence
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
from crawler.cli.logs import EngineErrors, crawl_logging
from crawler.cli.options import (
    FLAG_SETTINGS,
    INTERVAL_SETTINGS,
    check_frontier,
    checked_settings,
    crawl_settings,
    project_settings,
)

if TYPE_CHECKING:
    from crawler.fetch.inputs import Inputs

USABLE_OUTCOMES = ("feed", "page", "opml", "not_modified", "not_due")
#: What a worker of a shared job fetched that is the web's answer, not the worker's failure: a feed of the job
#: that is gone (404, 410) or not a feed is the job's data whichever worker took it.
ANSWERED_OUTCOMES = ("http_error", "not_feed")

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
    from pipelines.dataset.jobids import default_job_id

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
    from crawler.extensions.dataset import DatasetError
    from crawler.middlewares.netsafety import NetworkGuardError

    if isinstance(exc, DatasetError | NetworkGuardError):
        return fail(str(exc))
    # An error the engine logged comes first: what the crawl then fails with may be its consequence.
    real = errors.engine if errors is not None and errors.engine is not None else exc
    return fail(f"the crawl could not run: {type(real).__name__}: {real}")


def crawl_result(crawler: Any, errors: EngineErrors | None, elapsed: float) -> CrawlResult:
    from crawler.extensions.dataset import Dataset

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

    A ``worker`` that joined late may have found nothing left to fetch, or taken only requests its hosts
    answered with an error (a gone feed): that is no failure (one whose every request got no answer is).
    """
    stats = result.stats
    out, job = settings.get("FEEDCENSUS_OUT"), settings.get("FEEDCENSUS_JOB_ID")
    if stats.get("feedcensus/dataset_error"):
        lost = stats.get("feedcensus/rows_lost", 0)
        return EXIT_DATASET, f"{stats['feedcensus/dataset_error']}; {lost} rows were not written"
    if stats.get("feedcensus/history_error"):  # crawler/extensions/history.py: the earlier jobs could not be read
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
    fetched = sum(
        stats.get(f"feedcensus/outcome/{o}", 0) for o in USABLE_OUTCOMES + (ANSWERED_OUTCOMES if worker else ())
    )
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
