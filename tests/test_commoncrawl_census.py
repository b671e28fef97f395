"""``feedcensus commoncrawl --sites --live``: a census of listed sites, archived pages read, their feeds fetched live.

The world is real and built on loopback (``crawler/demo/censusworld.py``): WARC files in Common
Crawl's layout served by Range request, an index in its columns, a top list in Tranco's shape, and a
live web where each site has its own 127.1.x.y address, some feeds unchanged, some moved, gone or
changed since the archive. The world knows its right answers from its description alone; the census
must find every feed an archived page advertises, fetch each live once, keep the archived copy
beside it, record the sites with no archived page, and its coverage table must equal the answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow.parquet as pq
import pytest

from crawler.archive.ccindex import IndexRowsError
from crawler.archive.sites import ListedSite, read_sites, select_sites
from crawler.demo.censusworld import ADVERTISED, World, kind_of, open_world
from crawler.demo.rangeserver import RangeServer
from tests.conftest import QUICK_CRAWL, processes_that_wrote, read_table, run_cli

CENSUS = (*QUICK_CRAWL, "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8")


def census(world: World, server: RangeServer, out: Path, *args: str) -> Any:
    return run_cli(
        "commoncrawl", "--index", str(world.index), "--sites", str(world.top_list), "--archive-base", server.url,
        "--out", str(out), "--job-id", "census", *CENSUS, *args,
    )  # fmt: skip


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Any:
    work = tmp_path_factory.mktemp("census")
    with open_world(work / "world", listed=200, unlisted=50) as world, RangeServer(world.folder) as server:
        proc = census(world, server, work / "out", "--pages", "2", "--live", "--allow-private-networks")
        yield {"world": world, "out": work / "out", "proc": proc, "ranges": list(server.requests)}


def test_the_census_reads_only_the_listed_sites_pages_and_feeds(ran: dict[str, Any]) -> None:
    proc, world = ran["proc"], ran["world"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert "sites: 200 listed sites, 120 with an archived page, 80 without" in proc.stderr
    index = pq.read_table(world.index).to_pylist()
    listed = {line.split(",")[1] for line in world.top_list.read_text().split()}
    asked = {(path.lstrip("/"), int(r.removeprefix("bytes=").split("-")[0])) for path, r in ran["ranges"] if r}
    assert len(asked) == len([r for path, r in ran["ranges"] if r])  # each record once
    for row in index:
        where = (row["warc_filename"], row["warc_record_offset"])
        wanted = row["url_host_registered_domain"] in listed and row["fetch_status"] == 200
        wanted = wanted and row["content_mime_detected"] != "image/png"
        if not wanted:  # an unlisted site, an archived redirect, an image: never read
            assert where not in asked, row["url"]
    homes = {r["url"] for r in index if r["url"].endswith(":" + r["url"].split(":")[-1].split("/")[0] + "/")}
    home_asked = {r["url"] for r in index if (r["warc_filename"], r["warc_record_offset"]) in asked} & homes
    assert len(home_asked) == 120  # every listed site with pages: its home page first


def test_every_advertised_feed_is_fetched_live_once_beside_its_archived_copy(ran: dict[str, Any]) -> None:
    world, out = ran["world"], ran["out"]
    answers = world.answers
    log = read_table(out, "fetch_log").to_pylist()
    live = [r for r in log if r["discovered_via"] == "archive-link"]
    fetched = [r for r in live if r["outcome"] != "duplicate"]
    assert sorted(r["url"] for r in fetched) == sorted(answers.advertised)  # every advertised feed, once
    for url in answers.advertised:
        parts = urlsplit(url)
        assert world.web.hits[(parts.hostname, parts.path)] == 1, url
    assert not any(path not in {p for p, _ in ADVERTISED.values()} | {"/feed/rss.xml", "/robots.txt"}
                   for _, path in world.web.hits)  # fmt: skip  # no page was fetched live
    # "same" sites advertise their feed on every page: the later links are duplicates, not fetches.
    assert any(r["outcome"] == "duplicate" for r in live)
    by_url = {r["url"]: r for r in fetched}
    for url, status in answers.advertised.items():
        row = by_url[url]
        assert row["status"] == status and row["warc_filename"] is None, row
        assert (row["outcome"] == "feed") == (status == 200), row
    for old, new in answers.moved.items():
        assert by_url[old]["final_url"] == new and by_url[old]["outcome"] == "feed"

    feeds = read_table(out, "feeds").to_pylist()
    archived = {r["url"]: r for r in feeds if r["discovered_via"] == "archive"}
    live_feeds = {r["url"]: r for r in feeds if r["discovered_via"] == "archive-link"}
    assert set(archived) == set(answers.archived_feeds)
    assert set(live_feeds) == {u for u, s in answers.advertised.items() if s == 200}
    for url in answers.archived_feeds & set(answers.advertised):
        kept, now = archived[url], live_feeds[url]
        assert kept["warc_filename"] and kept["warc_record_offset"] is not None and now["warc_filename"] is None
        assert kept["fetched_at"].year == 2026 and kept["fetched_at"].month == 3  # when the archive fetched it
        assert now["source"] and now["source"].startswith(url.split("/feed")[0].rsplit("/", 1)[0])
    items = read_table(out, "items").to_pylist()
    for url, (then, now_items) in answers.changed.items():
        assert (archived[url]["item_count"], live_feeds[url]["item_count"]) == (then, now_items)
        assert archived[url]["content_hash"] != live_feeds[url]["content_hash"]
        # Each copy's items say whose they are (items.archived), so the two copies never mix.
        copies = [r["archived"] for r in items if r["feed_url"] == url]
        assert (copies.count(True), copies.count(False)) == (then, now_items)


def test_a_site_with_no_archived_page_has_a_row(ran: dict[str, Any]) -> None:
    answers = ran["world"].answers
    log = read_table(ran["out"], "fetch_log").to_pylist()
    missing = {r["site"]: r for r in log if r["outcome"] == "not_archived"}
    assert set(missing) == set(answers.no_page)
    row = next(iter(missing.values()))
    assert row["discovered_via"] == "archive" and "no archived page" in row["error"]
    assert row["url"] == f"http://{row['site']}/"


def test_the_coverage_table_equals_the_known_answers(ran: dict[str, Any]) -> None:
    from crawler.report.survey import compute

    answers = ran["world"].answers
    survey = compute(str(ran["out"]))
    sites = {r["key"]: r for r in survey.table("coverage_sites").rows}
    assert {k: r["sites"] for k, r in sites.items()} == {
        "named": answers.listed,
        "with_page": answers.with_page,
        "advertising": answers.advertising,
        "archive_captured": answers.archive_captured,
        "live_parsed": answers.live_parsed,
    }
    assert sites["advertising"]["pct_archived"] == round(100 * answers.advertising / answers.with_page, 2)
    assert sites["archive_captured"]["peer_pct"] == 7.0 and sites["advertising"]["peer_pct"] == 35.9
    feeds = {r["key"]: r["count"] for r in survey.table("coverage_feeds").rows}
    statuses = list(answers.advertised.values())
    assert feeds == {
        "fetched": len(answers.advertised),
        "parsed": statuses.count(200),
        "moved": len(answers.moved),
        "gone": statuses.count(404) + statuses.count(410),
        "failed": 0,
        "with_archived": len(answers.archived_feeds & set(answers.advertised)),
        "changed": len(answers.changed),
        "more_items": sum(now - then for then, now in answers.changed.values()),
    }


def test_the_survey_counts_one_copy_of_a_feed_the_census_holds_twice(ran: dict[str, Any]) -> None:
    """An archived and a live copy of one feed URL: the survey counts one (the first fetched), and the items,
    usage and rule rows it joins are that copy's alone (items.archived), not both copies' summed."""
    from crawler.report.survey import compute

    answers = ran["world"].answers
    survey = compute(str(ran["out"]))
    (rss,) = survey.table("formats").rows
    feeds = read_table(ran["out"], "feeds").to_pylist()
    first: dict[str, dict[str, Any]] = {}
    for row in sorted(feeds, key=lambda r: r["fetched_at"]):
        first.setdefault(row["url"], row)
    assert rss["items"] == sum(r["item_count"] for r in first.values())
    assert sum(r["items"] for r in survey.table("date_forms").rows) == rss["items"]
    assert sum(r["items"] for r in survey.table("item_identity").rows) == rss["items"]
    (title,) = [r for r in survey.table("item_elements").rows if r["element"] == "title"]
    assert title["items"] == rss["items"]  # every item has a title: counted once each
    counted = {(url, row["discovered_via"] == "archive") for url, row in first.items()}
    checks = read_table(ran["out"], "conformance").to_pylist()
    occurrences = sum(r["count"] for r in checks if (r["feed_url"], r["archived"]) in counted)
    assert sum(r["occurrences"] for r in survey.table("rule_failures").rows) == occurrences
    assert occurrences < sum(r["count"] for r in checks)  # the other copies' rows were left out
    assert any(first[url]["discovered_via"] == "archive" for url in answers.changed)


def test_without_live_the_links_are_recorded_and_the_guard_refuses_private_feeds(tmp_path: Path) -> None:
    with open_world(tmp_path / "world", listed=20, unlisted=0) as world, RangeServer(world.folder) as server:
        recorded = census(world, server, tmp_path / "recorded", "--pages", "1")
        guarded = census(world, server, tmp_path / "guarded", "--pages", "1", "--live")
        assert not world.web.hits, "a census reached the live web without being allowed to"
    assert recorded.returncode == 0 and guarded.returncode == 0, guarded.stderr[-2000:]
    links = read_table(tmp_path / "recorded", "links").to_pylist()
    assert links and not any(link["followed"] for link in links)
    assert not [
        r for r in read_table(tmp_path / "recorded", "fetch_log").to_pylist() if r["discovered_via"] == "archive-link"
    ]
    # --live without --allow-private-networks: the feeds on 127.1.x.y are refused by the network guard.
    rows = read_table(tmp_path / "guarded", "fetch_log").to_pylist()
    live = [r for r in rows if r["discovered_via"] == "archive-link" and r["outcome"] != "duplicate"]
    assert live and {r["outcome"] for r in live} == {"refused"}
    assert {r["url"] for r in live} == set(world.answers.advertised)
    # The survey of the census without --live: the archive's side of the coverage, nothing live.
    from crawler.report.survey import run

    markdown = run(str(tmp_path / "recorded"))
    assert "Coverage: the sites, in the archive and on the live web" in markdown
    assert "| whose archived pages advertise a feed | 10 |" in markdown
    assert "| whose advertised feed was fetched live and parsed | 0 |" in markdown


def test_guess_finds_a_live_feed_no_archived_page_advertises(tmp_path: Path) -> None:
    from crawler.report.survey import compute

    with open_world(tmp_path / "world", listed=20, unlisted=0) as world, RangeServer(world.folder) as server:
        proc = census(world, server, tmp_path / "out", "--pages", "1", "--live", "--guess", "--allow-private-networks")
    assert proc.returncode == 0, proc.stderr[-2000:]
    answers = world.answers
    assert len(answers.guessable) == 1
    log = read_table(tmp_path / "out", "fetch_log").to_pylist()
    [guessed] = [r for r in log if r["url"] in answers.guessable and r["outcome"] != "duplicate"]
    assert (guessed["discovered_via"], guessed["outcome"]) == ("guess", "feed")
    pages = {r["url"] for r in log if r["discovered_via"] == "archive" and r["outcome"] == "page"}
    assert guessed["source"] in pages and urlsplit(guessed["source"]).hostname == urlsplit(guessed["url"]).hostname
    sites = {r["key"]: r["sites"] for r in compute(str(tmp_path / "out")).table("coverage_sites").rows}
    assert sites["live_parsed"] == answers.live_parsed + 1
    assert sites["advertising"] == answers.advertising  # a guess is not an advertisement


def test_select_sites_takes_the_home_page_first_then_a_sample_and_names_the_missing(tmp_path: Path) -> None:
    index = tmp_path / "index.csv"
    index.write_text(
        "url,url_host_registered_domain,fetch_status,content_mime_detected,warc_filename,warc_record_offset,warc_record_length\n"
        "http://a.example/zz,a.example,200,text/html,f,0,10\n"
        "http://a.example/y,a.example,200,text/html,f,10,10\n"
        "https://www.a.example/,a.example,200,text/html,f,20,10\n"
        "http://a.example/,a.example,200,text/html,f,30,10\n"
        "http://a.example/moved,a.example,301,text/html,f,40,10\n"
        "http://a.example/feed,a.example,200,application/rss+xml,f,50,10\n"
        "http://b.example/,b.example,200,application/rss+xml,f,60,10\n"
        "http://c.example/,c.example,200,text/html,f,70,10\n"
        "http://e.example/long-page,e.example,200,text/html,f,80,10\n"
        "http://e.example/page,e.example,200,text/html,f,90,10\n"
    )
    sites = [ListedSite(1, "a.example"), ListedSite(2, "b.example"), ListedSite(3, "d.example")]
    chosen = select_sites(str(index), sites, pages=1)
    assert [(r.url, r.kind) for r in chosen.rows] == [
        ("http://a.example/", "page"),  # the home page (the shortest home URL) first
        ("http://a.example/y", "page"),  # then one more: the shortest URL; https://www.a.example/ is a second home
        ("http://a.example/feed", "feed"),
        ("http://b.example/", "feed"),  # b has a feed record but no page
    ]
    assert [s.domain for s in chosen.missing] == ["b.example", "d.example"] and chosen.listed == 3
    where = select_sites(str(index), sites, pages=5, where="url NOT LIKE '%/y'")
    assert "http://a.example/y" not in {r.url for r in where.rows}
    assert "http://a.example/moved" not in {r.url for r in where.rows}  # fetch_status 301: not read
    # A site without a home page record: its first other page stands in, even with --pages 0.
    only_pages = select_sites(str(index), [ListedSite(1, "e.example")], pages=0)
    assert [r.url for r in only_pages.rows] == ["http://e.example/page"] and not only_pages.missing
    no_site = tmp_path / "no-site.csv"
    no_site.write_text("url,warc_filename,warc_record_offset,warc_record_length,content_mime_detected\n")
    with pytest.raises(IndexRowsError, match=r"lacks the column\(s\) url_host_registered_domain"):
        select_sites(str(no_site), sites)


def test_read_sites_reads_the_tranco_shape_and_counts_what_it_leaves_out(tmp_path: Path) -> None:
    top = tmp_path / "top.csv"
    top.write_text("rank,domain\n2,B.example.\n1,a.example\n3,a.example\nbroken line\n\n4,c.example\r\n")
    sites, skipped = read_sites(str(top))
    assert sites == [ListedSite(1, "a.example"), ListedSite(2, "b.example"), ListedSite(4, "c.example")]
    assert skipped == 2
    assert read_sites(str(top), limit=1)[0] == [ListedSite(1, "a.example")]


def test_bad_census_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    index = tmp_path / "index.csv"
    index.write_text(
        "url,warc_filename,warc_record_offset,warc_record_length,content_mime_detected\nhttp://a/,f,0,1,text/html\n"
    )
    top = tmp_path / "top.csv"
    top.write_text("1,a.example\n")
    cases = {
        ("--sites", str(tmp_path / "none.csv")): "--sites",
        ("--sites", str(top)): "lacks the column(s) url_host_registered_domain",
        ("--live",): "--live needs --sites",
    }
    for args, said in cases.items():
        proc = run_cli("commoncrawl", "--index", str(index), "--out", str(tmp_path / "out"), *args)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0], lines


def test_the_world_is_what_its_answers_say() -> None:
    """The answers follow from the kinds: 40 % of sites with no page, the rest split six ways."""
    kinds = [kind_of(i) for i in range(200)]
    assert kinds.count("none") + kinds.count("feed-only") == 80 and kinds.count("feed-only") == 10
    assert all(kinds.count(k) == 20 for k in ADVERTISED)


def test_a_census_on_a_frontier_shares_its_records_and_live_fetches_with_a_worker(tmp_path: Path) -> None:
    """--sites --live --frontier: a worker joins with --frontier, --job and --out alone (the job's settings,
    --live and --allow-private-networks among them, travel with it); every advertised feed is fetched
    live once, named archive-link, whichever process fetched it."""
    import subprocess
    import sys

    from tests.conftest import REPO
    from tests.redisserver import RedisServer

    out = tmp_path / "out"
    with (
        open_world(tmp_path / "world", listed=60, unlisted=10) as world,
        RangeServer(world.folder) as server,
        RedisServer(tmp_path / "redis") as redis,
    ):
        coordinator = subprocess.Popen(
            [sys.executable, "-m", "crawler.cli", "commoncrawl", "--index", str(world.index), "--sites",
             str(world.top_list), "--archive-base", server.url, "--out", str(out), "--job-id", "cen", "--pages", "2",
             "--live", "--allow-private-networks", "--frontier", redis.url, *CENSUS,
             "-s", "FEEDCENSUS_FRONTIER_HEARTBEAT=0.5"],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        worker = run_cli(
            "worker", "--frontier", redis.url, "--job", "cen", "--out", str(out),
            "-s", "FEEDCENSUS_FRONTIER_HEARTBEAT=0.5",
        )  # fmt: skip
        _, err = coordinator.communicate(timeout=300)
        hits = dict(world.web.hits)
        answers = world.answers
    assert coordinator.returncode == 0, err[-3000:]
    assert worker.returncode == 0, worker.stderr[-3000:]
    log = read_table(out, "fetch_log").to_pylist()
    fetched = [r for r in log if r["discovered_via"] == "archive-link" and r["outcome"] != "duplicate"]
    assert sorted(r["url"] for r in fetched) == sorted(answers.advertised)
    for url in answers.advertised:
        parts = urlsplit(url)
        assert parts.hostname is not None, url
        assert hits[(parts.hostname, parts.path)] == 1, url
    # The archived copies too, each once, beside the live fetches of the same URLs (two fetches, two keys).
    archived = [r["url"] for r in log if r["discovered_via"] == "archive" and r["outcome"] == "feed"]
    assert sorted(archived) == sorted(answers.archived_feeds)
    feeds = read_table(out, "feeds").to_pylist()
    assert sorted(r["url"] for r in feeds if r["discovered_via"] == "archive") == sorted(answers.archived_feeds)
    items = read_table(out, "items").to_pylist()
    for url, (then, now_items) in answers.changed.items():
        copies = [r["archived"] for r in items if r["feed_url"] == url]
        assert (copies.count(True), copies.count(False)) == (then, now_items), url
    assert {r["site"] for r in log if r["outcome"] == "not_archived"} == set(answers.no_page)
    assert len(read_table(out, "workers").to_pylist()) == processes_that_wrote(worker.stderr)
