"""The survey report: its percentages recomputed independently from the Parquet with DuckDB.

A deterministic sample of 40 real feeds from ../shared/corpus/benchmark_feeds is
served on 127.0.0.1 (with a few HTML pages advertising some of them) and
crawled for real; ``feedcensus survey`` then writes its CSV tables, and every
percentage of the channel and item tables (and several others) is recomputed
here with plain SQL over ``read_parquet``. Smaller tests write hand-made
Parquet rows to pin the definitions: case-variant merging, stable order,
missing tables, errors.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from crawler.demo.routes import Route, Web
from crawler.demo.webserver import WebServer
from crawler.report.reference import KNOWN_NAMES, PUBLISHED
from crawler.report.survey import DATE_FORMS, LINK_KINDS, compute, run
from crawler.report.views import SurveyError
from pipelines.document.checks import RULES
from schemas.tables import TABLES, arrow_schema
from schemas.vocab import DateForm, FeedMediaType
from tests.conftest import CORPUS, QUICK_CRAWL, run_cli

SAMPLE_JOB = "a-sample"
SMALL_JOB = "b-small"
MEDIA = {"RSS 2.0": "application/rss+xml", "Atom 1.0": "application/atom+xml", "RSS 1.0": "application/rdf+xml"}
TOL = 0.011  # two-decimal rounding on both sides


def sample_files() -> list[tuple[str, str]]:
    """(file name, manifest format) of every fifth benchmark feed in name order: 40 feeds."""
    manifest = CORPUS / "benchmark_feeds" / "manifest.tsv"
    with manifest.open(encoding="utf-8") as fh:
        rows = sorted(csv.DictReader(fh, delimiter="\t"), key=lambda r: r["local_file"])
    return [(Path(r["local_file"]).name, r["format"]) for r in rows][::5]


def page(links: str, body: str = "") -> Route:
    html = f"<!DOCTYPE html><html><head><title>p</title>{links}</head><body><p>hello</p>{body}</body></html>"
    return Route(body=html.encode(), headers={"Content-Type": "text/html; charset=utf-8"})


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    if not (CORPUS / "benchmark_feeds").is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    files = sample_files()
    assert len(files) == 40
    web = Web()
    for i, (name, fmt) in enumerate(files):
        # every fourth feed served as text/xml, so the USM Content-Type shares are not all 100%
        ctype = "text/xml; charset=utf-8" if i % 4 == 3 else MEDIA.get(fmt, "application/xml")
        web.add(
            f"/feeds/{name}",
            Route(body=(CORPUS / "benchmark_feeds" / name).read_bytes(), headers={"Content-Type": ctype}),
        )
    f0, f1, f2 = (f"{{{{BASE}}}}/feeds/{files[i][0]}" for i in range(3))
    web.add(
        "/site/both.html",
        page(
            f'<link rel="alternate" type="application/rss+xml" href="{f0}">'
            f'<link rel="alternate" type="application/atom+xml" href="{f1}">'
        ),
    )
    web.add("/site/capital.html", page(f'<link rel="Alternate" type="application/rss+xml" href="{f2}">'))
    web.add("/site/body.html", page("", f'<link rel="alternate" type="application/rss+xml" href="{f0}">'))
    web.add("/site/none.html", page(""))
    work = tmp_path_factory.mktemp("survey")
    out = work / "out"
    flags = [
        *QUICK_CRAWL,
        "-s",
        "ROBOTSTXT_OBEY=False",
        "-s",
        "CONCURRENT_REQUESTS_PER_DOMAIN=16",
        "--no-reflexive",
        "--log-level",
        "WARNING",
    ]
    with WebServer(web).start() as server:
        urls = [server.url_for(f"/feeds/{name}") for name, _ in files]
        urls += [server.url_for(f"/site/{p}.html") for p in ("both", "capital", "body", "none")]
        args = [a for u in urls for a in ("--url", u)]
        proc = run_cli("crawl", *args, "--out", str(out), "--job-id", SAMPLE_JOB, *flags)
        assert proc.returncode == 0, proc.stderr[-3000:]
        small = run_cli(
            "crawl", *[a for u in urls[:3] for a in ("--url", u)], "--out", str(out), "--job-id", SMALL_JOB, *flags
        )
        assert small.returncode == 0, small.stderr[-3000:]
    report = work / "report"
    proc = run_cli("survey", str(out), "--job", SAMPLE_JOB, "--out", str(report), "--print")
    assert proc.returncode == 0, proc.stderr[-3000:]
    con = duckdb.connect()
    for table in TABLES:
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{out}/{table}/job_id={SAMPLE_JOB}/*.parquet')")
    yield {"out": out, "report": report, "stdout": proc.stdout, "con": con, "files": files}
    con.close()


def read_csv(report: Path, name: str) -> list[dict[str, str]]:
    with (report / f"{name}.csv").open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def num(value: str) -> float | None:
    return float(value) if value != "" else None


def canon(fmt: str) -> dict[str, str]:
    return {name.lower(): name for name in KNOWN_NAMES[fmt]}


def expected_elements(con: duckdb.DuckDBPyConnection, fmt: str, scope: str) -> dict[str, tuple[int, int]]:
    """element -> (feeds, items), merging case variants of known names, straight from the Parquet."""
    n_rows = con.execute(
        """SELECT u.feed_url, u.element, coalesce(u.items_with, 0), f.item_count
           FROM element_usage u JOIN feeds f ON f.url = u.feed_url
           WHERE f.format = ? AND u.scope = ? AND u.element NOT LIKE '%@%'""",
        [fmt, scope],
    ).fetchall()
    names = canon(fmt)
    per_feed: dict[tuple[str, str], list[int]] = {}
    for url, element, items_with, item_count in n_rows:
        key = (names.get(element.lower(), element), url)
        acc = per_feed.setdefault(key, [0, item_count])
        acc[0] += items_with
    out: dict[str, tuple[int, int]] = {}
    for (element, _), (items_with, item_count) in per_feed.items():
        feeds, items = out.get(element, (0, 0))
        out[element] = (feeds + 1, items + min(items_with, item_count))
    return out


def test_sample_crawl_has_the_formats_of_the_sample(sample: dict[str, Any]) -> None:
    con = sample["con"]
    got = dict(con.execute("SELECT format, count(*) FROM feeds GROUP BY ALL").fetchall())
    want: dict[str, int] = {}
    for _, fmt in sample["files"]:
        key = {"Atom 1.0": "atom", "RSS 1.0": "rdf"}.get(fmt, "rss")
        want[key] = want.get(key, 0) + 1
    assert got == want
    rows = read_csv(sample["report"], "formats")
    assert sum(int(r["feeds"]) for r in rows) == 40
    for r in rows:
        n = con.execute(
            "SELECT count(*) FROM feeds WHERE format = ? AND coalesce(version, '') = ?", [r["format"], r["version"]]
        ).fetchone()[0]
        assert int(r["feeds"]) == n
        assert abs(num(r["pct_feeds"]) - 100 * n / 40) < TOL


@pytest.mark.parametrize("scope", ["channel", "item"])
def test_element_tables_match_an_independent_recount(sample: dict[str, Any], scope: str) -> None:
    con = sample["con"]
    n, items = con.execute("SELECT count(*), sum(item_count) FROM feeds WHERE format = 'rss'").fetchone()
    assert n >= 25 and items > 0
    want = expected_elements(con, "rss", scope)
    rows = read_csv(sample["report"], f"{scope}_elements")
    assert [r["element"] for r in rows] == sorted(want, key=lambda e: (-want[e][0], e)), "complete, stably sorted"
    for r in rows:
        feeds, item_total = want[r["element"]]
        assert int(r["feeds"]) == feeds, r
        assert abs(num(r["pct_feeds"]) - 100 * feeds / n) < TOL, r
        if scope == "item":
            assert int(r["items"]) == item_total, r
            assert abs(num(r["pct_items"]) - 100 * item_total / items) < TOL, r
    # every published figure sits beside ours
    published = {p.element: p for p in PUBLISHED if p.scope == scope}
    for r in rows:
        p = published.get(r["element"])
        assert num(r["board_2007"]) == (p.board_2007 if p else None)
    assert {"title", "link", "description"} <= {r["element"] for r in rows}


def test_published_comparison_lists_every_figure_with_ours(sample: dict[str, Any]) -> None:
    con = sample["con"]
    n = con.execute("SELECT count(*) FROM feeds WHERE format = 'rss'").fetchone()[0]
    rows = read_csv(sample["report"], "published_comparison")
    assert len(rows) == len(PUBLISHED)
    for r, p in zip(rows, PUBLISHED, strict=True):
        feeds = con.execute(
            """SELECT count(DISTINCT u.feed_url) FROM element_usage u JOIN feeds f ON f.url = u.feed_url
               WHERE f.format = 'rss' AND u.scope = ? AND lower(u.element) = lower(?)""",
            [p.scope, p.element],
        ).fetchone()[0]
        assert int(r["feeds"]) == feeds, r
        assert abs(num(r["pct_feeds"]) - 100 * feeds / n) < TOL
        assert (num(r["board_2007"]), num(r["survey_2005"])) == (p.board_2007, p.survey_2005)
    dc_language = next(r for r in rows if r["element"] == "dc:language")
    assert dc_language["board_2007"] == "36.00"


def test_namespaces_attributes_and_undefined_elements(sample: dict[str, Any]) -> None:
    con = sample["con"]
    n = con.execute("SELECT count(*) FROM feeds WHERE format = 'rss'").fetchone()[0]
    ns = {r["namespace"]: r for r in read_csv(sample["report"], "namespaces")}
    for prefix in ("dc", "atom", "content"):
        feeds = con.execute(
            """SELECT count(DISTINCT u.feed_url) FROM element_usage u JOIN feeds f ON f.url = u.feed_url
               WHERE f.format = 'rss' AND u.element LIKE ? || ':%'""",
            [prefix],
        ).fetchone()[0]
        assert feeds > 0, prefix
        assert int(ns[prefix]["feeds"]) == feeds
        assert abs(num(ns[prefix]["pct_feeds"]) - 100 * feeds / n) < TOL
    attrs = read_csv(sample["report"], "attributes")
    want = con.execute(
        """SELECT u.element, u.scope, count(DISTINCT u.feed_url) FROM element_usage u JOIN feeds f ON f.url = u.feed_url
           WHERE f.format = 'rss' AND u.element LIKE '%@%' GROUP BY ALL""",
    ).fetchall()
    assert {(r["attribute"], r["scope"], int(r["feeds"])) for r in attrs} == set(want)
    undefined = read_csv(sample["report"], "undefined_elements")
    want = con.execute(
        """SELECT u.element, u.scope, count(DISTINCT u.feed_url) FROM element_usage u JOIN feeds f ON f.url = u.feed_url
           WHERE f.format = 'rss' AND NOT u.defined GROUP BY ALL""",
    ).fetchall()
    assert {(r["element"], r["scope"], int(r["feeds"])) for r in undefined} == set(want)


def test_rule_failure_rates(sample: dict[str, Any]) -> None:
    con = sample["con"]
    n = con.execute("SELECT count(*) FROM feeds WHERE format = 'rss'").fetchone()[0]
    rows = read_csv(sample["report"], "rule_failures")
    assert {r["rule"] for r in rows} >= set(RULES), "every rule is listed, also those no feed fails"
    want = dict(
        con.execute(
            """SELECT c.rule, count(DISTINCT c.feed_url) FROM conformance c JOIN feeds f ON f.url = c.feed_url
               WHERE f.format = 'rss' GROUP BY ALL"""
        ).fetchall()
    )
    assert want, "real feeds fail some rules"
    for r in rows:
        feeds = want.get(r["rule"], 0)
        assert int(r["feeds"]) == feeds, r
        assert abs(num(r["pct_feeds"]) - 100 * feeds / n) < TOL
        if r["rule"] in RULES:
            assert (r["severity"], r["w3c"]) == (RULES[r["rule"]].severity, ", ".join(RULES[r["rule"]].w3c))
    keys = [(-int(r["feeds"]), r["rule"]) for r in rows]
    assert keys == sorted(keys)


def test_date_forms(sample: dict[str, Any]) -> None:
    con = sample["con"]
    want = dict(
        con.execute(
            """SELECT coalesce(i.date_form, '(no date)'), count(*) FROM items i JOIN feeds f ON f.url = i.feed_url
               WHERE f.format = 'rss' GROUP BY ALL"""
        ).fetchall()
    )
    total = sum(want.values())
    rows = read_csv(sample["report"], "date_forms")
    assert [r["date_form"] for r in rows][:7] == [
        "rfc822-universal",
        "rfc822-other-zone",
        "rfc822-2digit-year",
        "iso8601",
        "other-parsed",
        "unparsed",
        "not-tried",
    ]
    for r in rows:
        assert int(r["items"]) == want.get(r["date_form"], 0)
        assert abs(num(r["pct_items"]) - 100 * want.get(r["date_form"], 0) / total) < TOL
    assert sum(int(r["items"]) for r in rows) == total


def test_autodiscovery_summary_counts_pages_and_links(sample: dict[str, Any]) -> None:
    """The autodiscovery table's page and link counts, recounted from fetch_log and links."""
    con = sample["con"]
    summary = {r["measure"]: r for r in read_csv(sample["report"], "autodiscovery")}
    pages = con.execute(
        "SELECT count(DISTINCT coalesce(final_url, url)) FROM fetch_log WHERE outcome = 'page'"
    ).fetchone()[0]
    assert pages == 4
    assert int(summary["pages fetched"]["count"]) == pages
    advertising = con.execute(
        """SELECT count(DISTINCT page_url) FROM links WHERE in_head
           AND page_url IN (SELECT coalesce(final_url, url) FROM fetch_log WHERE outcome = 'page')"""
    ).fetchone()[0]
    assert advertising == 2  # both.html and capital.html; body.html only in the body, none.html nothing
    row = summary["pages advertising at least one feed (link in head)"]
    assert (int(row["count"]), num(row["share"])) == (advertising, 50.0)
    assert int(summary["pages with feed links only in the body"]["count"]) == 1
    assert int(summary["pages advertising an Atom feed"]["count"]) == 1
    links, rss_ok = con.execute("SELECT count(*), count(*) FILTER (WHERE conforms_rss) FROM links").fetchone()
    assert int(summary["feed links found"]["count"]) == links == 4
    row = summary["links conforming to RSS Autodiscovery (RSS Board)"]
    assert int(row["count"]) == rss_ok and abs(num(row["share"]) - 100 * rss_ok / links) < TOL


def test_autodiscovery_reasons_and_link_types(sample: dict[str, Any]) -> None:
    reasons = {r["reason"]: int(r["links"]) for r in read_csv(sample["report"], "autodiscovery_reasons")}
    assert reasons["rss-rel-not-lowercase"] == 1 and reasons["not-in-head"] == 1
    assert "atom-type-not-atom" not in reasons  # the Atom draft judges Atom links only
    specs = {r["reason"]: r["spec"] for r in read_csv(sample["report"], "autodiscovery_reasons")}
    assert specs["rss-rel-not-lowercase"] == "RSS Autodiscovery (RSS Board, 2006)"
    assert specs["not-in-head"] == "both autodiscovery specs"
    kinds = {r["kind"]: int(r["links"]) for r in read_csv(sample["report"], "autodiscovery_link_types")}
    assert kinds == {"RSS": 3, "Atom": 1}


def assert_usm_row_matches_feeds(con: duckdb.DuckDBPyConnection, fmt: str, r: dict[str, str]) -> None:
    """One row of usm_self_links (one format, or "(all)") against a recount of the feeds table."""
    where = "" if fmt == "(all)" else f"WHERE format = '{fmt}'"
    row = con.execute(
        f"""SELECT count(*), count(*) FILTER (WHERE content_type_ok), count(self_url),
                   count(*) FILTER (WHERE self_url_matches) FROM feeds {where}"""
    ).fetchone()
    assert row is not None
    feeds, ok, selfs, matches = row
    assert int(r["feeds"]) == feeds
    assert abs(num(r["pct_content_type_ok"]) - 100 * ok / feeds) < TOL
    assert abs(num(r["pct_self_url"]) - 100 * selfs / feeds) < TOL
    if selfs:
        assert abs(num(r["pct_self_url_matches"]) - 100 * matches / selfs) < TOL


def test_usm_self_links_match_a_recount(sample: dict[str, Any]) -> None:
    usm = {r["format"]: r for r in read_csv(sample["report"], "usm_self_links")}
    for fmt, r in usm.items():
        assert_usm_row_matches_feeds(sample["con"], fmt, r)
    pct = num(usm["(all)"]["pct_content_type_ok"])
    assert pct is not None and 0 < pct < 100


def test_reflexive_is_not_checked_with_no_reflexive(sample: dict[str, Any]) -> None:
    reflexive = read_csv(sample["report"], "reflexive")
    assert [(r["verdict"], int(r["feeds"])) for r in reflexive] == [("(not checked)", 40)]  # --no-reflexive


def test_markdown_is_printed_and_written(sample: dict[str, Any]) -> None:
    out = sample["stdout"]
    assert out == (sample["report"] / "survey.md").read_text(encoding="utf-8") + "\n"
    for heading in (
        "## Formats and versions",
        "## Namespaces (rss)",
        "## Attributes (rss)",
        "## Undefined core elements (rss)",
        "## RSS Best Practices Profile: rule failure rates (rss)",
        "## Date forms of items (rss)",
        "## Autodiscovery adoption",
        "## Comparison with the published surveys",
    ):
        assert heading in out, heading
    assert f"job {SAMPLE_JOB}" in out
    assert "| RSS Board 2007 % |" in out
    n, items = sample["con"].execute("SELECT count(*), sum(item_count) FROM feeds WHERE format = 'rss'").fetchone()
    assert f"## RSS channel elements ({n} feeds)" in out and f"## RSS item elements ({n} feeds, {items} items)" in out
    for name in (
        "channel_elements",
        "item_elements",
        "namespaces",
        "attributes",
        "undefined_elements",
        "rule_failures",
        "date_forms",
        "autodiscovery",
        "usm_self_links",
        "reflexive",
        "formats",
    ):
        assert (sample["report"] / f"{name}.csv").is_file(), name
    assert (sample["report"] / "survey.html").is_file()


def test_job_and_format_filters(sample: dict[str, Any]) -> None:
    latest = run_cli("survey", str(sample["out"]))
    assert latest.returncode == 0, latest.stderr
    assert f"job {SMALL_JOB}" in latest.stdout  # the latest job by default
    con = duckdb.connect()
    counted = con.execute(
        f"SELECT count(*) FROM read_parquet('{sample['out']}/feeds/job_id={SMALL_JOB}/*.parquet') WHERE format = 'rss'"
    ).fetchone()
    assert counted is not None
    small = counted[0]
    assert f"Share of the {small} rss feeds whose channel has the element." in latest.stdout
    atom = run_cli("survey", str(sample["out"]), "--job", SAMPLE_JOB, "--format", "atom")
    assert atom.returncode == 0, atom.stderr
    n_atom = sample["con"].execute("SELECT count(*) FROM feeds WHERE format = 'atom'").fetchone()[0]
    assert n_atom > 0
    assert f"Share of the {n_atom} atom feeds whose channel has the element." in atom.stdout
    assert "RSS Board 2007" not in atom.stdout  # the published figures are about RSS
    survey = compute(str(sample["out"]), SAMPLE_JOB, fmt="atom")
    want = expected_elements(sample["con"], "atom", "item")
    got = {r["element"]: (r["feeds"], r["items"]) for r in survey.table("item_elements").rows}
    assert got == want


# --- hand-made datasets ------------------------------------------------------------------

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def write_dataset(out: Path, job: str, rows: dict[str, list[dict[str, Any]]]) -> None:
    """Write Parquet files in the dataset layout, with the declared schemas (missing columns null)."""
    for table, table_rows in rows.items():
        schema = arrow_schema(table)
        full = [{f.name: r.get(f.name) for f in TABLES[table]} for r in table_rows]
        directory = out / table / f"job_id={job}"
        directory.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(full, schema=schema), directory / "part-0.parquet")


def feed(url: str, items: int, fmt: str = "rss") -> dict[str, Any]:
    return {
        "url": url,
        "format": fmt,
        "version": "2.0",
        "well_formed": True,
        "item_count": items,
        "discovered_via": "url",
        "bytes": 100,
        "fetched_at": NOW,
    }


def usage(url: str, scope: str, element: str, items_with: int | None = None, defined: bool = True) -> dict[str, Any]:
    return {
        "feed_url": url,
        "scope": scope,
        "element": element,
        "count": items_with or 1,
        "items_with": items_with,
        "defined": defined,
    }


@pytest.fixture
def handmade(tmp_path: Path) -> Path:
    out = tmp_path / "ds"
    write_dataset(
        out,
        "j1",
        {
            "feeds": [feed("http://a/", 2), feed("http://b/", 4), feed("http://c/", 1), feed("http://d/", 3, "atom")],
            "element_usage": [
                usage("http://a/", "item", "wfw:commentRss", 2),
                usage("http://b/", "item", "wfw:commentRSS", 1),
                usage("http://c/", "item", "wfw:commentRss", 1),
                usage("http://c/", "item", "wfw:commentRSS", 1),
                usage("http://a/", "channel", "pubdate", defined=False),
                usage("http://b/", "channel", "pubDate"),
                usage("http://a/", "channel", "Zed"),
                usage("http://a/", "channel", "zed"),
                usage("http://b/", "channel", "apple"),
                usage("http://b/", "channel", "content", defined=False),
                usage("http://c/", "channel", "ttl"),
                usage("http://d/", "channel", "title"),
            ],
            "fetch_log": [{"url": "http://a/", "outcome": "feed", "fetched_at": NOW}],
        },
    )
    return out


def test_case_variants_are_merged_and_said_so(handmade: Path) -> None:
    s = compute(str(handmade))
    items = {r["element"]: r for r in s.table("item_elements").rows}
    assert list(items) == ["wfw:commentRss"]
    row = items["wfw:commentRss"]
    # c has both spellings on its single item: capped at its item count
    assert (row["feeds"], row["items"], row["pct_feeds"], row["pct_items"]) == (3, 4, 100.0, round(400 / 7, 2))
    assert row["variants"] == "wfw:commentRSS (2 feeds)"
    assert any("wfw:commentRss also counts wfw:commentRSS (2 feeds)" in n for n in s.table("item_elements").notes)
    channel = {r["element"]: r for r in s.table("channel_elements").rows}
    assert channel["pubDate"]["feeds"] == 2 and channel["pubDate"]["variants"] == "pubdate (1 feeds)"
    assert "pubdate" not in channel
    # the undefined-elements table keeps the name as written
    assert [(r["element"], r["feeds"]) for r in s.table("undefined_elements").rows] == [("content", 1), ("pubdate", 1)]
    assert channel["content"]["flag"] == "undefined"
    assert channel["pubDate"]["flag"] == ""  # pubDate itself is defined; the variant is listed
    # unknown names are never merged, whatever their case
    assert channel["Zed"]["feeds"] == 1 and channel["zed"]["feeds"] == 1


def test_tables_are_stably_sorted(handmade: Path) -> None:
    s = compute(str(handmade))
    assert [r["element"] for r in s.table("channel_elements").rows] == [
        "pubDate",
        "Zed",
        "apple",
        "content",
        "ttl",
        "zed",
    ]
    ttl = next(r for r in s.table("channel_elements").rows if r["element"] == "ttl")
    assert (ttl["board_2007"], ttl["survey_2005"]) == (21.0, 11.7)
    again = compute(str(handmade))
    assert again.tables == s.tables


def test_missing_tables_give_empty_rows_not_errors(handmade: Path, tmp_path: Path) -> None:
    s = compute(str(handmade))  # no items, links, conformance in this job
    forms = {r["date_form"]: r["items"] for r in s.table("date_forms").rows}
    assert set(forms.values()) == {0}
    assert s.table("autodiscovery_link_types").rows == ()
    assert all(r["feeds"] == 0 for r in s.table("rule_failures").rows)
    report = tmp_path / "rep"
    md = run(str(handmade), report_dir=str(report))
    assert "_No rows._" in md
    assert (report / "survey.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert read_csv(report, "autodiscovery_reasons") == []


def test_format_filter_counts_only_that_format(handmade: Path) -> None:
    s = compute(str(handmade), fmt="atom")
    assert s.totals["format_feeds"] == 1
    assert [(r["element"], r["pct_feeds"]) for r in s.table("channel_elements").rows] == [("title", 100.0)]
    assert all(t.name != "published_comparison" for t in s.tables)
    assert s.totals["feeds"] == 4


def test_errors_are_survey_errors(tmp_path: Path, handmade: Path) -> None:
    with pytest.raises(SurveyError, match="no crawl found"):
        compute(str(tmp_path / "nothing"))
    with pytest.raises(SurveyError, match="no job 'nope'"):
        compute(str(handmade), "nope")
    proc = run_cli("survey", str(handmade), "--job", "nope")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "no job 'nope'" in proc.stderr and "Traceback" not in proc.stderr


def test_the_report_explains_every_date_form_and_feed_media_type() -> None:
    # The names come from schemas.vocab; the report only adds what each means, in the vocabulary's order.
    assert list(DATE_FORMS) == [form.value for form in DateForm]
    assert all(DATE_FORMS.values())
    assert list(LINK_KINDS) == [media.value for media in FeedMediaType]
    assert all(LINK_KINDS.values())


def test_rule_failures_of_rss1_feeds_are_counted_for_format_rdf(tmp_path: Path) -> None:
    """rss1 rules fail in RSS 1.0 feeds (format rdf): the rdf survey counts them, the rss one lists them at 0."""
    out = tmp_path / "ds"
    rdf = {**feed("http://r/", 1, "rdf"), "version": "1.0"}

    def failure(url: str, rule: str) -> dict[str, Any]:
        r = RULES[rule]
        return {"feed_url": url, "rule": rule, "severity": r.severity, "scope": "channel", "count": 1,
                "source": r.source, "w3c": list(r.w3c)}  # fmt: skip

    write_dataset(
        out,
        "j1",
        {
            "feeds": [feed("http://a/", 2), rdf],
            "conformance": [failure("http://r/", "rss1-missing-required"), failure("http://a/", "item-missing-guid")],
            "fetch_log": [{"url": "http://a/", "outcome": "feed", "fetched_at": NOW}],
        },
    )
    con = duckdb.connect()
    for fmt in ("rdf", "rss"):
        want = dict(
            con.execute(
                f"""SELECT c.rule, count(DISTINCT c.feed_url)
                    FROM read_parquet('{out}/conformance/*/*.parquet') c
                    JOIN read_parquet('{out}/feeds/*/*.parquet') f ON f.url = c.feed_url
                    WHERE f.format = ? GROUP BY ALL""",
                [fmt],
            ).fetchall()
        )
        table = compute(str(out), fmt=fmt).table("rule_failures")
        assert {r["rule"]: r["feeds"] for r in table.rows if r["feeds"]} == want
        assert {r["rule"] for r in table.rows} >= set(RULES)
        assert any("rss1 rules" in note and "format rdf" in note for note in table.notes)
    assert want == {"item-missing-guid": 1}
    con.close()


def test_atom_section_counts_the_atom_rules_on_atom_feeds(sample: dict[str, Any]) -> None:
    """The Atom section beside the profile's: every Atom rule, its feeds recounted from the Parquet."""
    con = sample["con"]
    n = con.execute("SELECT count(DISTINCT url) FROM feeds WHERE format = 'atom'").fetchone()[0]
    assert n > 0
    found = con.execute(
        """SELECT c.rule, count(DISTINCT c.feed_url) FROM conformance c JOIN feeds f ON f.url = c.feed_url
           WHERE f.format = 'atom' GROUP BY ALL"""
    ).fetchall()
    want = dict(found)
    assert want, "the census writes conformance rows for Atom feeds"
    assert all(RULES[rule].source == "atom" for rule in want), "an Atom feed gets the Atom rules only"
    rows = read_csv(sample["report"], "atom_rule_failures")
    assert {r["rule"] for r in rows} == {rule for rule, r in RULES.items() if r.source == "atom"}
    for r in rows:
        assert int(r["feeds"]) == want.get(r["rule"], 0), r
        assert abs(num(r["pct_feeds"]) - 100 * want.get(r["rule"], 0) / n) < TOL
    by_format = {r["format"]: r for r in read_csv(sample["report"], "conformance_by_format")}
    for fmt in ("rss", "atom"):
        feeds, clean = con.execute(
            """SELECT count(DISTINCT f.url), count(DISTINCT f.url) FILTER (WHERE NOT EXISTS (
                   SELECT 1 FROM conformance c WHERE c.feed_url = f.url AND c.severity = 'error'))
               FROM feeds f WHERE f.format = ?""",
            [fmt],
        ).fetchone()
        assert (int(by_format[fmt]["feeds"]), int(by_format[fmt]["clean"])) == (feeds, clean)
    platforms = read_csv(sample["report"], "atom_platforms")
    assert sum(int(r["feeds"]) for r in platforms) >= n
    assert all(int(r["top_feeds"]) <= int(r["feeds"]) for r in platforms)
    md = sample["stdout"]
    assert md.index("RSS Best Practices Profile: rule failure rates") < md.index("Atom 1.0 (RFC 4287): rule failure")
