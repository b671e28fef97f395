"""``feedcensus changes`` and ``survey --since``: what changed between runs, on real Parquet.

A dataset of three runs is written job after job with the project's own DatasetWriter
(``list_jobs`` orders runs by their first commit marker; the job names sort in another
order on purpose), with a feed of each kind the sections tell apart: one that changes
(elements, rules, new and changed items), one carried forward from the first run
(``changed = false``, ``parsed_job`` = the first job) that must compare as unchanged,
a new one, one that fails, one that stopped being a feed, one not requested, one not
due, and one that became a feed. Every number is worked out by hand below; the
command line runs for real (``.venv/bin/feedcensus`` in a subprocess).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

from crawler.report.changes import ChangesError, compute, to_markdown
from pipelines.dataset.commits import DatasetWriter
from pipelines.dataset.schedule import items_per_week
from pipelines.dataset.store import list_jobs
from tests.conftest import REPO, assert_usage_error

FEEDCENSUS = REPO / ".venv" / "bin" / "feedcensus"

ONE, TWO, THREE = "one", "two", "three"  # run order; "three" sorts before "two" by name
T1 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
T2 = T1 + timedelta(days=7)
T3 = T1 + timedelta(days=14)
DAY = timedelta(days=1)

A = "http://a.test/feed"  # parsed in every run; changes in the third
B = "http://b.test/rss"  # parsed in the first run, carried forward (304) in the second and third
C = "http://c.test/atom"  # new in the third run
D = "http://d.test/feed"  # a feed in runs one and two, a 404 in three
E = "http://e.test/feed"  # a feed in run two, an HTML page (not_feed) in three
F = "http://f.test/feed"  # a feed in runs one and two, not requested in three
G = "http://g.test/feed"  # a feed in run two, not due in three (carried forward)
H = "http://h.test/feed"  # not a feed in run one, a feed in three


# --- rows -------------------------------------------------------------------------------


def feed(url: str, job: str, at: datetime, **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "url": url, "final_url": url, "status": 200, "format": "rss", "version": "2.0", "well_formed": True,
        "item_count": 0, "discovered_via": "url", "bytes": 100, "fetched_at": at, "changed": True,
        "parsed_job": job, "title": url.split("/")[2],
    }  # fmt: skip
    row.update(extra)
    return row


def carried(url: str, parsed_job: str, at: datetime, **extra: Any) -> dict[str, Any]:
    """A feeds row carrying forward the parse of ``parsed_job`` (304, same body or not due)."""
    return feed(url, parsed_job, at, changed=False, new_items=0, changed_items=0, **extra)


def item(
    url: str, position: int, identity: str, job: str, *, new: bool, changed: bool = False, **extra: Any
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "feed_url": url, "position": position, "guid": identity, "identity": identity, "identity_source": "guid",
        "content_hash": f"h-{identity}", "first_seen_job": job, "is_new": new, "is_changed": changed,
        "title": f"title {identity}",
    }  # fmt: skip
    row.update(extra)
    return row


def usage(url: str, *pairs: str) -> list[dict[str, Any]]:
    """element_usage rows from ``scope/element`` strings."""
    return [
        {"feed_url": url, "scope": p.split("/")[0], "element": p.split("/")[1], "count": 1, "items_with": None}
        for p in pairs
    ]


def rules(url: str, *ids: str) -> list[dict[str, Any]]:
    return [{"feed_url": url, "rule": r, "severity": "warning", "scope": "channel", "count": 1} for r in ids]


def log(url: str, at: datetime, outcome: str = "feed", status: int | None = 200, **extra: Any) -> dict[str, Any]:
    return {"url": url, "final_url": url, "status": status, "outcome": outcome, "fetched_at": at, **extra}


def write_job(out: Path, job: str, tables: Mapping[str, Iterable[Mapping[str, Any]]]) -> None:
    writer = DatasetWriter(str(out), job)
    writer.write_many({t: list(rows) for t, rows in tables.items()})
    writer.close()
    time.sleep(0.02)  # the next run's first commit marker is later


A_USAGE = ("channel/title", "channel/link", "item/title", "item/guid")
B_USAGE = ("channel/title", "item/title")


def run_one(out: Path) -> None:
    a_items = [
        item(A, 0, "a1", ONE, new=True, pub_date=T1 - DAY),
        item(A, 1, "a2", ONE, new=True, pub_date=T1 - 2 * DAY),
        item(A, 2, "a7", ONE, new=True, pub_date=T3 - 40 * DAY),
    ]
    b_items = [item(B, 0, "b1", ONE, new=True, pub_date=T3 - 17 * DAY), item(B, 1, "b2", ONE, new=True)]
    write_job(
        out,
        ONE,
        {
            "feeds": [
                feed(A, ONE, T1, item_count=3),
                feed(B, ONE, T1, item_count=2),
                feed(D, ONE, T1),
                feed(F, ONE, T1),
                feed(H, ONE, T1, format="unknown", version=None, parse_error="not a feed"),
            ],
            "items": a_items + b_items,
            "element_usage": usage(A, *A_USAGE) + usage(B, *B_USAGE) + usage(D, "channel/title"),
            "conformance": rules(A, "rule-x") + rules(B, "rule-x"),
            "fetch_log": [log(u, T1) for u in (A, B, D, F)] + [log(H, T1, "not_feed")],
        },
    )


def run_two(out: Path) -> None:
    write_job(
        out,
        TWO,
        {
            "feeds": [
                feed(A, TWO, T2, item_count=3),
                carried(B, ONE, T2, status=304),
                feed(D, TWO, T2),
                feed(E, TWO, T2),
                feed(F, TWO, T2),
                feed(G, TWO, T2),
            ],
            "items": [
                item(A, 0, "a3", TWO, new=True, pub_date=T2 - DAY, title="Third"),
                item(A, 1, "a1", ONE, new=False, pub_date=T1 - DAY),
                item(A, 2, "a2", ONE, new=False, pub_date=T1 - 2 * DAY),
            ],
            "element_usage": usage(A, *A_USAGE) + usage(D, "channel/title") + usage(E, "channel/title"),
            "conformance": rules(A, "rule-x"),
            "fetch_log": [log(B, T2, "not_modified", 304)] + [log(u, T2) for u in (A, D, E, F, G)],
        },
    )


def run_three(out: Path) -> None:
    a_items = [
        item(A, 0, "a4", THREE, new=True, pub_date=T3 - DAY, title="Fourth"),
        item(A, 1, "a5", THREE, new=True, pub_date=T3 - 2 * DAY, title="Fifth"),
        item(A, 2, "a3", TWO, new=False, changed=True, pub_date=T2 - DAY, title="Third, revised"),
        item(A, 3, "a1", ONE, new=False, pub_date=T1 - DAY),
        item(A, 4, "a2", ONE, new=False, pub_date=T1 - 2 * DAY),
        item(A, 5, "a6", THREE, new=True, pub_date=T3 + 3 * DAY, title="From the future"),  # bogus date
        item(A, 6, "a8", THREE, new=True, title=None, link="http://a.test/8"),  # the fourth new one
    ]
    write_job(
        out,
        THREE,
        {
            "feeds": [
                feed(A, THREE, T3, item_count=7),
                carried(B, ONE, T3, status=304),
                feed(C, THREE, T3, format="atom", version="1.0", item_count=1, title="C's feed"),
                feed(E, THREE, T3, format="unknown", version=None, parse_error="not a feed"),
                carried(G, TWO, T2),  # not due: keeps the fetch time of run two
                feed(H, THREE, T3),
            ],
            "items": [*a_items, item(C, 0, "c1", THREE, new=True, pub_date=T3 - DAY)],
            "element_usage": usage(A, "channel/title", "item/title", "item/guid", "item/dc:creator")
            + usage(C, "channel/title", "entry/title")
            + usage(H, "channel/title"),
            "conformance": rules(A, "rule-y"),
            "fetch_log": [
                log(A, T3),
                log(B, T3, "not_modified", 304),
                log(C, T3),
                log(D, T3, "http_error", 404, error="HTTP 404 Not Found"),
                log(D, T3 - DAY, "duplicate", None),
                log(E, T3, "not_feed", error="not a feed: an HTML page"),
                log(G, T3, "not_due", None),
                log(H, T3),
            ],
        },
    )


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("changes") / "out"
    run_one(out)
    run_two(out)
    run_three(out)
    assert list_jobs(str(out)) == [ONE, TWO, THREE]
    return out


def feedcensus(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(FEEDCENSUS), *args], capture_output=True, text=True, timeout=120, cwd=REPO, check=False)


def by_url(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["url"]: r for r in rows}


# --- the sections -------------------------------------------------------------------------


def test_defaults_compare_the_latest_run_with_the_one_before(dataset: Path) -> None:
    changes = compute(str(dataset))
    assert (changes.span.job, changes.span.since, changes.span.runs) == (THREE, TWO, (THREE,))


def test_new_feeds_were_a_feed_in_no_run_up_to_since(dataset: Path) -> None:
    s = compute(str(dataset)).sections
    assert [r["url"] for r in s["new_feeds"]] == [C, H]  # H was not a feed in run one
    c = by_url(s["new_feeds"])[C]
    assert (c["format"], c["version"], c["title"], c["items"], c["first_job"]) == ("atom", "1.0", "C's feed", 1, THREE)
    # since run one, G (a feed first in run two, carried forward in three) is new too, and says since when;
    # E is not: it is no feed in run three
    older = by_url(compute(str(dataset), since=ONE).sections["new_feeds"])
    assert sorted(older) == [C, G, H]
    assert (older[G]["first_job"], older[C]["first_job"]) == (TWO, THREE)
    older_two = by_url(compute(str(dataset), job=TWO, since=ONE).sections["new_feeds"])
    assert sorted(older_two) == [E, G]
    assert {r["first_job"] for r in older_two.values()} == {TWO}


def test_gone_feeds_failed_or_stopped_being_feeds(dataset: Path) -> None:
    gone = compute(str(dataset)).sections["gone_feeds"]
    # D: a 404 (its duplicate row is bookkeeping); E: not a feed any more. F (not requested) and
    # G (not due) and B (304) are not gone.
    assert gone == [
        {"url": D, "outcome": "http_error", "status": 404, "error": "HTTP 404 Not Found"},
        {"url": E, "outcome": "not_feed", "status": 200, "error": "not a feed: an HTML page"},
    ]


def test_element_usage_changes_and_the_carried_feed_compares_equal(dataset: Path) -> None:
    for since in (TWO, ONE):
        changed = compute(str(dataset), since=since).sections["element_usage_changed"]
        # only A: B is carried forward from run one in both runs, G from run two, and their usage is the same
        assert changed == [
            {
                "url": A,
                "added": [{"scope": "item", "element": "dc:creator"}],
                "removed": [{"scope": "channel", "element": "link"}],
            }
        ], since


def test_the_carried_feed_has_no_rows_of_its_own_in_the_later_runs(dataset: Path) -> None:
    """What makes the carried views matter: read per run, B would have lost every element."""
    con = duckdb.connect()
    own = con.execute(
        "SELECT count(*) FROM read_parquet(?, hive_partitioning = 1, hive_types = {'job_id': VARCHAR}) "
        "WHERE job_id = 'three' AND feed_url = ?",
        [str(dataset / "element_usage" / "**" / "*.parquet"), B],
    ).fetchone()
    assert own == (0,)


def test_a_feed_carried_from_a_census_brings_the_rows_of_its_own_copy_only(tmp_path: Path) -> None:
    """A census with ``--live`` holds two copies of a URL: the archive's record (``discovered_via`` archive) and
    the live fetch, each with its own items (``archived``). A later run whose fetch of the URL is unchanged
    (304) carries the live copy's rows forward, not both; a later census whose record of it is unchanged carries
    the archived copy's. Before, the job's views held the rows of both copies for the URL, twice its items."""
    from crawler.report.views import connect

    out = tmp_path / "out"
    archived = feed(B, ONE, T1, discovered_via="archive", item_count=1)
    live = feed(B, ONE, T1, discovered_via="archive-link", item_count=2)
    copies = [
        item(B, 0, "old", ONE, new=True, archived=True),
        item(B, 0, "new1", ONE, new=True, archived=False),
        item(B, 1, "new2", ONE, new=True, archived=False),
    ]
    write_job(out, ONE, {"feeds": [archived, live], "items": copies, "fetch_log": [log(B, T1)]})
    write_job(out, TWO, {"feeds": [carried(B, ONE, T2)], "fetch_log": [log(B, T2, "not_modified", 304)]})
    census_again = carried(B, ONE, T3, discovered_via="archive")
    write_job(out, THREE, {"feeds": [census_again], "fetch_log": [log(B, T3, "feed", 200)]})
    for job, identities in ((TWO, ["new1", "new2"]), (THREE, ["old"])):
        con, _ = connect(str(out), job)
        got = con.execute("SELECT identity FROM items WHERE feed_url = ? ORDER BY identity", [B]).fetchall()
        assert [r[0] for r in got] == identities, job
        con.close()


def test_conformance_changes_are_rules_added_and_removed(dataset: Path) -> None:
    changed = compute(str(dataset)).sections["conformance_changed"]
    assert changed == [{"url": A, "added": ["rule-y"], "removed": ["rule-x"]}]  # not B: carried, same rule


def test_new_and_changed_items_with_up_to_three_titles(dataset: Path) -> None:
    s = compute(str(dataset)).sections
    assert s["new_items"] == [
        {"url": A, "items": 4, "titles": ["Fourth", "Fifth", "From the future"]},
        {"url": C, "items": 1, "titles": ["title c1"]},
    ]
    assert s["changed_items"] == [{"url": A, "items": 1, "titles": ["Third, revised"]}]
    # since run one: run two's new item counts too, listed after run three's (newest run first)
    wider = by_url(compute(str(dataset), since=ONE).sections["new_items"])
    assert wider[A]["items"] == 5 and wider[A]["titles"] == ["Fourth", "Fifth", "From the future"]
    only_two = by_url(compute(str(dataset), job=TWO, since=ONE).sections["new_items"])
    assert only_two == {A: {"url": A, "items": 1, "titles": ["Third"]}}


def test_an_item_without_a_title_is_shown_by_its_link(dataset: Path) -> None:
    # run three's fourth new item of A, beyond the three titles: alone, it shows its link
    s = compute(str(dataset)).sections
    assert "http://a.test/8" not in s["new_items"][0]["titles"]
    con = duckdb.connect()
    (link,) = con.execute(
        "SELECT coalesce(title, link) FROM read_parquet(?, hive_partitioning = 1, hive_types = {'job_id': VARCHAR}) "
        "WHERE identity = 'a8'",
        [str(dataset / "items" / "**" / "*.parquet")],
    ).fetchone() or (None,)
    assert link == "http://a.test/8"


def test_cadence_from_dates_matches_the_schedule_s_own_rate(dataset: Path) -> None:
    cadence = by_url(compute(str(dataset)).sections["cadence"])
    # A: a4 a5 a3 a1 a2 within 28 days before T3; a7 older; a6 a day too far in the future; a8 undated
    assert cadence[A]["recent_items"] == 5
    assert cadence[A]["per_week_pub_date"] == 1.25
    con = duckdb.connect()
    dates = [
        r[0]
        for r in con.execute(
            "SELECT pub_date FROM read_parquet(?, hive_partitioning = 1, hive_types = {'job_id': VARCHAR}) "
            "WHERE job_id = 'three' AND feed_url = ?",
            [str(dataset / "items" / "**" / "*.parquet"), A],
        ).fetchall()
    ]
    rate = items_per_week(dates, T3)
    assert rate is not None and cadence[A]["per_week_pub_date"] == round(rate, 2)
    # B: carried forward, its dates are run one's; b1 is 17 days before run three's fetch
    assert (cadence[B]["recent_items"], cadence[B]["per_week_pub_date"]) == (1, 0.25)


def test_cadence_from_first_sightings(dataset: Path) -> None:
    cadence = by_url(compute(str(dataset)).sections["cadence"])
    # A: a3 first seen in run two, a4 a5 a6 a8 in run three: 5 identities in the 2 weeks from T1 to T3
    a = cadence[A]
    assert (a["first_job"], a["new_identities"], a["weeks"], a["per_week_first_seen"]) == (ONE, 5, 2.0, 2.5)
    # B: nothing new in 2 weeks; C: in one run only, n/a
    assert (cadence[B]["new_identities"], cadence[B]["per_week_first_seen"]) == (0, 0.0)
    assert (cadence[C]["weeks"], cadence[C]["per_week_first_seen"], cadence[C]["per_week_pub_date"]) == (
        None,
        None,
        0.25,
    )
    # G: not due in run three, fetched last in run two, its first run: no time observed
    assert cadence[G]["per_week_first_seen"] is None
    assert sorted(cadence) == [A, B, C, G, H]  # every feed of run three, not E (not a feed)


def test_a_rate_by_first_sighting_needs_a_day_observed(tmp_path: Path) -> None:
    """One new item in two runs 94 s apart printed "items/week by first sighting 6388.05", "weeks observed 0.00"."""
    out = tmp_path / "short"
    first = {"feeds": [feed(A, ONE, T1, item_count=1)], "items": [item(A, 0, "a1", ONE, new=True)]}
    write_job(out, ONE, {**first, "fetch_log": [log(A, T1)]})
    later = T1 + timedelta(seconds=94)
    items = [item(A, 0, "a9", TWO, new=True), item(A, 1, "a1", ONE, new=False)]
    write_job(out, TWO, {"feeds": [feed(A, TWO, later, item_count=2)], "items": items, "fetch_log": [log(A, later)]})
    (row,) = compute(str(out)).sections["cadence"]
    assert (row["new_identities"], row["per_week_first_seen"], row["observed_too_short"]) == (1, None, True)
    md = to_markdown(compute(str(out)))
    assert "6388" not in md and "0.00" not in md
    assert "| http://a.test/feed | n/a | 0 | too short to tell | 1 | under 1 day | one |" in md
    assert "too short to tell while those fetches are less than 1 day apart" in md
    # a day apart is enough
    items = [item(A, 0, "a9", TWO, new=False), item(A, 1, "a1", ONE, new=False)]
    write_job(
        out, THREE, {"feeds": [feed(A, THREE, T1 + DAY, item_count=2)], "items": items, "fetch_log": [log(A, T1 + DAY)]}
    )
    (row,) = compute(str(out)).sections["cadence"]
    assert (row["per_week_first_seen"], row["observed_too_short"]) == (7.0, False)


def test_markdown_has_every_section_with_its_count(dataset: Path) -> None:
    md = to_markdown(compute(str(dataset)))
    assert md.startswith("# Changes between runs: job three since two\n")
    for heading in (
        "## New feeds (2)",
        "## Feeds gone (2)",
        "## Element usage changed (1)",
        "## Conformance changed (1)",
        "## New items (2)",
        "## Changed items (1)",
        "## Publishing cadence (5)",
    ):
        assert f"\n{heading}\n" in md, heading
    assert "| http://a.test/feed | item/dc:creator | channel/link |" in md
    assert "| http://a.test/feed | 4 | Fourth; Fifth; From the future |" in md
    assert "2 new feeds; 2 gone; 1 with element usage changed" in md
    assert "| http://c.test/atom | 0.25 | 1 | n/a | 0 | n/a | three |" in md


# --- errors --------------------------------------------------------------------------------


def test_errors_name_the_problem(dataset: Path, tmp_path: Path) -> None:
    with pytest.raises(ChangesError, match="no job 'nope'"):
        compute(str(dataset), since="nope")
    with pytest.raises(ChangesError, match="not earlier than job 'two'"):
        compute(str(dataset), job=TWO, since=THREE)
    with pytest.raises(ChangesError, match="'one' is the first run"):
        compute(str(dataset), job=ONE)
    with pytest.raises(ChangesError, match="no such dataset directory"):
        compute(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ChangesError, match="no crawl found"):
        compute(str(tmp_path / "empty"))


# --- the command line ---------------------------------------------------------------------------


def test_changes_json_is_one_object_with_every_section(dataset: Path) -> None:
    proc = feedcensus("changes", str(dataset), "--json")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1
    got = json.loads(lines[0])
    assert (got["job"], got["since"], got["runs"]) == (THREE, TWO, [THREE])
    assert [r["url"] for r in got["new_feeds"]] == [C, H]
    assert [r["url"] for r in got["gone_feeds"]] == [D, E]
    assert got["conformance_changed"] == [{"url": A, "added": ["rule-y"], "removed": ["rule-x"]}]
    assert got["new_items"][0]["items"] == 4
    assert by_url(got["cadence"])[A]["per_week_first_seen"] == 2.5


def test_changes_markdown_with_job_and_since(dataset: Path) -> None:
    proc = feedcensus("changes", str(dataset), "--job", TWO, "--since", ONE)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# Changes between runs: job two since one\n")
    assert "## New feeds (2)" in proc.stdout and "## Feeds gone (0)" in proc.stdout
    assert proc.stderr == ""


def test_survey_since_appends_the_changes_section(dataset: Path, tmp_path: Path) -> None:
    proc = feedcensus("survey", str(dataset), "--since", ONE)
    assert proc.returncode == 0, proc.stderr
    survey, _, changes = proc.stdout.partition("\n## Changes between runs: job three since one\n")
    assert survey.startswith("# Feed survey: job three") and changes, proc.stdout[:500]
    assert (
        "\n### New feeds (3)\n" in changes
        and "\n### Feeds gone (1)\n" in changes
        and "\n### Publishing cadence (5)\n" in changes
    )
    report = tmp_path / "report"
    proc = feedcensus("survey", str(dataset), "--since", TWO, "--out", str(report))
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {report / 'changes.md'}" in proc.stdout.splitlines()
    assert (
        (report / "changes.md").read_text(encoding="utf-8").startswith("## Changes between runs: job three since two")
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["changes", "DATA", "--since", "nope"], "feedcensus changes: --since: no job 'nope' in"),
        (["changes", "DATA", "--job", "nope"], "feedcensus changes: no job 'nope' in"),
        (["changes", "DATA", "--job", TWO, "--since", THREE], "--since 'three' is not earlier than job 'two'"),
        (["changes", "DATA", "--job", ONE], "is the first run"),
        (["changes", "MISSING"], "feedcensus changes: no such dataset directory"),
        (["changes", "EMPTY"], "no crawl found"),
        (["survey", "DATA", "--since", "nope"], "feedcensus survey: --since: no job 'nope'"),
        (["survey", "MISSING", "--since", ONE], "no such dataset directory"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(dataset: Path, tmp_path: Path, args: list[str], needle: str) -> None:
    (tmp_path / "empty").mkdir()
    subst = {"DATA": str(dataset), "MISSING": str(tmp_path / "missing"), "EMPTY": str(tmp_path / "empty")}
    assert_usage_error(feedcensus(*[subst.get(a, a) for a in args]), needle)
