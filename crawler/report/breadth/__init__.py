"""The breadth sections of the survey (issue #16): every figure of the peer survey tool, from our rows.

The peer is mnot's feed-survey (0.1.2 on PyPI). Each section here is one function returning
:class:`~crawler.report.model.Table` objects that ``feedcensus survey`` renders like its other
tables; every figure is a DuckDB query over the job's Parquet tables, so a notebook can re-cut it.
``docs/survey-breadth.md`` defines each figure and compares it, figure by figure, with the peer's
(:data:`PEER_FIGURES` pairs them; ``benchmarks/bench_peer_survey.py`` runs both tools).

The package: ``prepare`` builds the working tables every section reads; the sections are in
``crawl`` (the run, autodiscovery, platforms, languages) and ``feeds`` (freshness, content,
hygiene, parse errors), over the helpers and cutoffs of ``common``; ``peer`` reads a survey's
measures back and pairs them with the peer's.

Decisions:

* One row per feed URL (the first fetch of the job, as the rest of the survey). A feed is *parsed*
  when its format is known (rss, atom, rdf); *strictly parsed* when it is also well-formed XML,
  which is what the peer calls parsed (it reads with ``recover=False``, we in recover mode).
* *Feed URLs checked* are the URLs requested as feeds: every fetch_log row except pages, OPML
  files, robots.txt, and the duplicate or not-due rows of a URL already counted.
* Summary sections are tables of measures with a stable ``key`` (:func:`read_measures` reads them
  back from the CSVs by key); the share column says what it is a share of.
* A section that needs a column the dataset's schema does not have yet says so in a note and
  shows its figures as empty, rather than failing the survey.
* Dates: an item dated more than :data:`FUTURE_TOLERANCE_DAYS` after its feed's fetch is
  *future-dated*, kept apart from undated items, and never counts as the newest item.
* Cutoffs that are the peer's are constants (in ``common.py``) with a comment saying so.

The operational quality score (the peer's ``report/quality.py:score_feed``, written again here in
SQL from its documented definition). A feed that is not parsed scores 0. ``age`` is the days from
the fetch back to the newest item's date, else the feed's own date (a date more than a day in the
future counts as none; a negative age is 0). No age, or an age over 365 days: score 0 (*inactive*).
Otherwise::

    raw = 0.35 recency + 0.25 content + 0.15 entries + 0.15 entry_metadata + 0.10 feed_metadata
    recency        = 2 ** (-age / 120)
    content        = 0.5 presence + 0.3 min(mean length / 1000, 1) + 0.2 profile
                     presence: 1 full content, 0.5 summary only, else 0
                     mean length: characters of every description and content of the items
                     profile: html or xhtml 1.0, mixed 0.75, plain 0.5, none 0.1
    entries        = min(items / 20, 1)
    entry_metadata = clamp(0.4 [newest item date] + 0.2 [oldest item date] + 0.2 [item languages]
                           + 0.2 [more than one length] - title penalty - 0.25 [any default title]
                           - link penalty, 0, 1)
                     title penalty: 0.35 when repeated titles >= 0.8 of titles, 0.20 when >= 0.5
                     link penalty:  0.25 when repeated links >= 0.8 of links, 0.15 when >= 0.5
    feed_metadata  = 0.3 [title] + 0.3 [link] + 0.2 [a language] + 0.2 [feed date]
    cap            = 0.55 if title_rep >= 0.8 or default share >= 0.5, else 0.70 if title_rep >= 0.5 or
                     any default title, else 1; then min(cap, 0.65) if link_rep >= 0.8, min(cap, 0.80)
                     if link_rep >= 0.5; and 0.45 when both the first and the third hold
    score          = round(clamp(min(raw, cap), 0, 1), 4)

A *repeated* title or link is one that occurs more than once in the feed (titles compared after
collapsing white space and lower-casing; links without their query and fragment); the ratio is
the items having one over the items with a title (a link). A feed scoring above
:data:`QUALITY_THRESHOLD` is a *quality* feed.
"""

from __future__ import annotations

import duckdb

from crawler.report.breadth.common import DEFAULT_TITLES
from crawler.report.breadth.crawl import autodiscovery, languages, platforms, run_summary
from crawler.report.breadth.feeds import content, freshness, hygiene, parse_errors
from crawler.report.breadth.peer import PEER_FIGURES, PEER_NOT_FIGURES, PeerFigure, peer_value, read_measures
from crawler.report.breadth.prepare import prepare
from crawler.report.model import Table

__all__ = [
    "DEFAULT_TITLES",
    "PEER_FIGURES",
    "PEER_NOT_FIGURES",
    "PeerFigure",
    "breadth_tables",
    "peer_value",
    "read_measures",
]

SECTIONS = (run_summary, autodiscovery, platforms, languages, freshness, content, hygiene, parse_errors)


def breadth_tables(con: duckdb.DuckDBPyConnection) -> list[Table]:
    """Every breadth table of one job, in section order (``con`` has the survey's views)."""
    prepare(con)
    return [t for section in SECTIONS for t in section(con)]
