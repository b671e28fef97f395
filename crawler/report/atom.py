"""The survey's Atom section: Atom 1.0 conformance beside the RSS profile's, by format and by platform.

Every survey (whatever its ``--format``) has these three tables, over the
feeds of the job (one row per URL, as everywhere in the survey):

* ``atom_rule_failures``: each Atom rule (``source = atom``, sections of RFC
  4287) with the share of Atom feeds failing it at least once, as the profile's
  ``rule_failures`` table does for RSS; every Atom rule is listed, also those
  no feed fails;
* ``conformance_by_format``: per feed format, how many feeds fail no
  error-severity rule of their format (RSS: the profile, RSS 2.0 and namespace
  rules; Atom: RFC 4287's; RSS 1.0: its own), how many fail no rule at all,
  and the mean number of failed rules per feed;
* ``atom_platforms``: the platforms the Atom feeds come from (the fingerprints
  of ``breadth_platforms``) and how their feeds fare against the Atom rules.

``conformance_by_format`` and ``atom_platforms`` read the breadth section's
temporary table ``bf``: :func:`atom_tables` runs after
``crawler.report.breadth.breadth_tables``.
"""

from __future__ import annotations

import duckdb

from crawler.report.model import Chart, Column, Table
from crawler.report.query import pct, same_copy
from crawler.report.query import rows as _rows
from pipelines.document.checks import RULES
from pipelines.document.checks.rules import ATOM

__all__ = ["atom_tables"]

#: The formats compared, and the rules each is checked against (``Rule.source``).
FORMAT_RULES = (
    ("rss", "RSS Best Practices Profile, RSS 2.0 and namespace rules"),
    ("atom", "Atom 1.0 (RFC 4287) rules"),
    ("rdf", "RSS 1.0 and namespace rules"),
)


def _per_feed(con: duckdb.DuckDBPyConnection) -> None:
    """``af``: each feed of the job (one row per URL) with its format, platforms and failed rules of each kind."""
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE af AS
           SELECT b.url, b.format, b.platforms, b.archived,
                  count(DISTINCT c.rule) FILTER (WHERE c.severity = 'error') AS error_rules,
                  count(DISTINCT c.rule) FILTER (WHERE c.severity = 'warning') AS warning_rules,
                  coalesce(sum(c.count) FILTER (WHERE c.severity = 'error'), 0)::BIGINT AS error_count
           FROM bf b LEFT JOIN conformance c ON {same_copy("c", "b")}
           WHERE b.format IN ('rss', 'atom', 'rdf') GROUP BY b.url, b.format, b.platforms, b.archived"""
    )


def _rule_failures(con: duckdb.DuckDBPyConnection) -> Table:
    n = con.execute("SELECT count(*) FROM af WHERE format = 'atom'").fetchone()[0]  # type: ignore[index]
    failed = {
        r["rule"]: r
        for r in _rows(
            con,
            f"""SELECT c.rule, count(DISTINCT c.feed_url) AS feeds, sum(c.count)::BIGINT AS occurrences
               FROM conformance c JOIN af a ON {same_copy("c", "a")} WHERE a.format = 'atom' GROUP BY c.rule""",
        )
    }
    atom_rules = [rule for rule in RULES.values() if rule.source == ATOM]
    rows = []
    for rule in atom_rules:
        got = failed.get(rule.id, {})
        rows.append(
            {
                "rule": rule.id,
                "severity": rule.severity,
                "section": rule.section,
                "w3c": ", ".join(rule.w3c),
                "feeds": got.get("feeds", 0),
                "pct_feeds": pct(got.get("feeds", 0), n),
                "occurrences": got.get("occurrences", 0),
                "title": rule.title,
            }
        )
    rows.sort(key=lambda r: (-r["feeds"], r["rule"]))
    clean = con.execute("SELECT count(*) FROM af WHERE format = 'atom' AND error_rules = 0").fetchone()[0]  # type: ignore[index]
    return Table(
        "atom_rule_failures",
        "Atom 1.0 (RFC 4287): rule failure rates",
        (
            Column("rule", "rule"),
            Column("severity", "severity"),
            Column("section", "RFC 4287 §"),
            Column("w3c", "W3C validator names"),
            Column("feeds", "feeds failing", "int"),
            Column("pct_feeds", "% of Atom feeds", "pct"),
            Column("occurrences", "occurrences", "int"),
            Column("title", "requirement"),
        ),
        tuple(rows),
        intro=f"Share of the {n} Atom feeds failing each Atom rule at least once (every rule listed, also those "
        "no feed fails). error = a must of RFC 4287; warning = what the W3C Feed Validator warns about (escaped "
        "HTML in plain text, unsafe HTML in content, blank elements).",
        notes=(
            f"{clean} of {n} Atom feeds ({pct(clean, n)}%) fail no error-severity Atom rule.",
            f"{sum(1 for r in rows if not r['feeds'])} of the {len(rows)} Atom rules fail on no Atom feed.",
            "Atom feeds get these rules only, RSS feeds the profile's (rule_failures); see docs/conformance.md.",
        ),
        chart=Chart("rule", "pct_feeds", zero_rows="rules no feed fails", zero_row="rule no feed fails"),
    )


def _by_format(con: duckdb.DuckDBPyConnection) -> Table:
    got = {
        r["format"]: r
        for r in _rows(
            con,
            """SELECT format, count(*) AS feeds,
                      count(*) FILTER (WHERE error_rules = 0) AS clean,
                      count(*) FILTER (WHERE error_rules = 0 AND warning_rules = 0) AS spotless,
                      round(avg(error_rules), 2) AS mean_error_rules, round(avg(warning_rules), 2) AS mean_warning_rules
               FROM af GROUP BY format""",
        )
    }
    rows = []
    for fmt, rules in FORMAT_RULES:
        r = got.get(fmt, {})
        feeds = r.get("feeds", 0)
        rows.append(
            {
                "format": fmt,
                "rules": rules,
                "feeds": feeds,
                "clean": r.get("clean", 0),
                "pct_clean": pct(r.get("clean", 0), feeds),
                "spotless": r.get("spotless", 0),
                "pct_spotless": pct(r.get("spotless", 0), feeds),
                "mean_error_rules": r.get("mean_error_rules"),
                "mean_warning_rules": r.get("mean_warning_rules"),
            }
        )
    return Table(
        "conformance_by_format",
        "Conformance by feed format",
        (
            Column("format", "format"),
            Column("rules", "checked against"),
            Column("feeds", "feeds", "int"),
            Column("clean", "failing no error rule", "int"),
            Column("pct_clean", "% failing no error rule", "pct"),
            Column("spotless", "failing no rule", "int"),
            Column("pct_spotless", "% failing no rule", "pct"),
            Column("mean_error_rules", "mean error rules failed"),
            Column("mean_warning_rules", "mean warning rules failed"),
        ),
        tuple(rows),
        intro="Each feed is checked against the rules of its format only; a rule failed several times in a feed "
        "counts once here.",
        chart=Chart("format", "pct_clean"),
    )


def _platforms(con: duckdb.DuckDBPyConnection) -> Table:
    rows = _rows(
        con,
        """WITH p AS (
               SELECT url, error_rules, error_count,
                      unnest(CASE WHEN len(coalesce(platforms, [])) = 0 THEN ['unknown'] ELSE platforms END) AS platform
               FROM af WHERE format = 'atom'),
           top AS (
               SELECT p.platform, c.rule, count(DISTINCT p.url) AS feeds
               FROM p JOIN conformance c ON c.feed_url = p.url GROUP BY p.platform, c.rule
               QUALIFY row_number() OVER (PARTITION BY p.platform ORDER BY count(DISTINCT p.url) DESC, c.rule) = 1)
           SELECT p.platform, count(*) AS feeds, count(*) FILTER (WHERE p.error_rules = 0) AS clean,
                  round(avg(p.error_count), 2) AS mean_errors, any_value(top.rule) AS top_rule,
                  coalesce(any_value(top.feeds), 0) AS top_feeds
           FROM p LEFT JOIN top USING (platform) GROUP BY p.platform ORDER BY feeds DESC, p.platform""",
    )
    n = con.execute("SELECT count(*) FROM af WHERE format = 'atom'").fetchone()[0]  # type: ignore[index]
    for r in rows:
        r["pct_feeds"] = pct(r["feeds"], n)
        r["pct_clean"] = pct(r["clean"], r["feeds"])
    return Table(
        "atom_platforms",
        "Atom feeds by platform, against the Atom rules",
        (
            Column("platform", "platform"),
            Column("feeds", "Atom feeds", "int"),
            Column("pct_feeds", "% of Atom feeds", "pct"),
            Column("pct_clean", "% failing no error rule", "pct"),
            Column("mean_errors", "mean error occurrences"),
            Column("top_rule", "most failed rule"),
            Column("top_feeds", "feeds failing it", "int"),
        ),
        tuple(rows),
        intro="The platform fingerprints of breadth_platforms (generator, HTTP headers, page markers), for the "
        "Atom feeds; a feed of several platforms counts under each, one without any under unknown.",
        chart=Chart("platform", "pct_feeds"),
    )


def atom_tables(con: duckdb.DuckDBPyConnection) -> list[Table]:
    """The Atom section's tables (``con`` has the breadth section's ``bf``)."""
    _per_feed(con)
    return [_rule_failures(con), _by_format(con), _platforms(con)]
