"""What every command shares: exit codes and the one-line error.

The exit codes of ``feedcensus crawl`` (README.md, "Exit codes"): 0 the crawl
ran (URLs that failed are data in ``fetch_log``); 1 it ran but fetched nothing
usable; 2 bad usage or unusable inputs, found before crawling (or a failure
inside Scrapy's engine); 3 the data could not all be written; 4 the shared
frontier (Redis) was lost mid-crawl; 130 interrupted.
"""

from __future__ import annotations

#: The crawl ran; what failed per URL is recorded in fetch_log.
EXIT_OK = 0
#: The crawl ran but no input gave a feed, a page or an OPML list.
EXIT_NOTHING_FETCHED = 1
#: Bad usage or inputs: one line on stderr, nothing done.
EXIT_USAGE = 2
#: The crawl ran but its data could not all be written (what was committed before stays readable).
EXIT_DATASET = 3
#: A distributed crawl lost its frontier (Redis) mid-way: what was committed stays; run a worker again to go on.
EXIT_FRONTIER = 4
#: Interrupted (Ctrl-C, SIGINT, SIGTERM): what was committed stays readable, and a --resume folder can go on.
EXIT_INTERRUPTED = 130


class CliError(Exception):
    """One line for stderr; exit code 2."""


def fail(message: str) -> CliError:
    return CliError(" ".join(str(message).split()))


def is_arrow_error(exc: BaseException) -> bool:
    """Whether ``exc`` is pyarrow's (``pyarrow.lib.ArrowException``: a Parquet file that is cut short, not
    Parquet, or of another schema), told apart without importing pyarrow, which not every command needs."""
    return any(c.__name__ == "ArrowException" and c.__module__ == "pyarrow.lib" for c in type(exc).__mro__)
