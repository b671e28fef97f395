"""Where a crawling command's log goes: the terminal (warnings, errors and the progress line; one line each)
and ``--log-file`` (Scrapy's INFO lines too); the engine's errors counted for the exit code."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from crawler.cli.errors import (
    fail,
)

if TYPE_CHECKING:
    pass


#: What the terminal shows unless --log-level (or -s LOG_LEVEL) says otherwise.
DEFAULT_TERMINAL_LEVEL = logging.WARNING
#: Scrapy's log format, for the terminal and the log file alike.
LOG_FORMAT = "%(asctime)s [%(name)s] %(levelname)s: %(message)s"
LOG_DATEFORMAT = "%Y-%m-%d %H:%M:%S"


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
