"""What a demo's output folder remembers of the demo web, so that a second ``feedcensus demo`` is a re-crawl.

The demo web runs on a loopback port, and the port is part of every URL the dataset records; its
dates are relative to a demo day (:mod:`crawler.demo.dates`). A second demo into the same folder must
see the same web again, or the incremental crawl takes every feed and item for new (before: ``changes``
said 11 new feeds and 29 new items). So the first demo into a folder writes ``demo-web.json`` there,
the port it served on and its demo day, and every later demo into that folder serves the same bytes on
the same port:

* the port: the one the folder remembers, else any free one (the kernel's choice). No fixed port is
  assumed free: two demos into two folders at once each get their own, and a taken port (another
  program, or a second demo into the same folder at the same time) is met with one line saying so and
  another free port, whose URLs are then new to the dataset (the folder remembers the new one);
* the demo day: the folder's first demo's day, kept for good. Served on that day, the demo web looks
  live (the report shows active feeds); every later demo into the folder serves the very same bytes, so
  a re-crawl sees what it would of a web that did not change: feeds not due, not modified (304) or
  unchanged, no new items. A day that moved with the clock would rewrite every date (and the dated
  item links) at midnight, and a re-crawl the next day would see every item changed or new. The
  price: the feeds of a folder grow old with it; a new folder (or an emptied one) starts afresh.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from crawler.demo.dates import today_utc
from crawler.demo.webserver import WebServer, demo_web

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["STATE_FILE", "DemoWeb", "read_demo_web", "start_demo_web", "write_demo_web"]

#: The file in a demo's output folder that remembers its demo web.
STATE_FILE = "demo-web.json"


@dataclass(frozen=True, slots=True)
class DemoWeb:
    """The demo web a folder's demos crawl: the loopback port it is served on and its demo day."""

    port: int
    day: date


def read_demo_web(folder: Path) -> tuple[DemoWeb | None, str | None]:
    """What ``folder`` remembers of its demo web, and a line saying why nothing is remembered when the
    file is there but cannot be used (None, None: no file, a first demo)."""
    path = folder / STATE_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"{path}: cannot read it ({exc.strerror or exc}): serving a new demo web"
    try:
        data = json.loads(raw)
        port, day = data["port"], date.fromisoformat(data["day"])
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            raise ValueError(port)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None, f"{path}: not what a demo writes: serving a new demo web"
    return DemoWeb(port, day), None


def write_demo_web(folder: Path, web: DemoWeb) -> None:
    """Remember ``web`` in ``folder`` (``OSError`` when the folder cannot be written)."""
    text = json.dumps({"port": web.port, "day": web.day.isoformat()}, indent=2) + "\n"
    (folder / STATE_FILE).write_text(text, encoding="utf-8")


def start_demo_web(remembered: DemoWeb | None, today: date | None = None) -> tuple[WebServer, DemoWeb, str | None]:
    """Start the demo web a folder remembers (else a new one, dated ``today``, default today in UTC).

    Returns the running server, what the folder is to remember now, and a line to show when the
    remembered port was taken (the web is then served on another free port).
    """
    day = remembered.day if remembered is not None else (today or today_utc())
    web = demo_web(day)
    note = None
    if remembered is not None:
        try:
            server = WebServer(web, port=remembered.port).start()
        except OSError as exc:
            server = WebServer(web).start()
            note = (
                f"port {remembered.port}, which the earlier demos into this folder were served on, is taken "
                f"({exc.strerror or exc}): serving on {server.port} instead, so this crawl finds every URL new"
            )
    else:
        server = WebServer(web).start()
    return server, DemoWeb(server.port, day), note
