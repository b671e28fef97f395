"""The Scrapy components in process, each built the way Scrapy builds it (``get_crawler()``, ``from_crawler``).

The end-to-end crawls show the components working together; these show each
one's contract alone: what it reads from the crawler, what it yields, what it
hands the dataset. Nothing here commits Parquet (that needs the reactor: the
crawl tests do it); rows are read back from the writer's buffers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Response
from scrapy.utils.test import get_crawler

from crawler.extensions.dataset import HOOK_ROLES, Dataset, DatasetError, dataset_of
from crawler.extensions.gc_threshold import GcThreshold
from crawler.extensions.interpreter import _HELD
from crawler.extensions.resume import JOURNAL_FILE, CrawlJournal, ResumeDupeFilter, read_journal
from crawler.extensions.switching import SwitchInterval
from crawler.fetch.inputs import read_inputs
from crawler.middlewares.autodiscovery import AutodiscoveryMiddleware
from crawler.middlewares.netsafety import NetworkSafetyMiddleware
from crawler.middlewares.robotslog import RobotsLogMiddleware
from crawler.outcomes import RefusedRequest
from crawler.requests import context_of, make_request
from crawler.spiders.census import CensusSpider
from crawler.stats import CensusStats
from pipelines.parquet import ParquetPipeline
from pipelines.reflexive import ReflexivePipeline
from schemas.items import FetchContext, FetchRecord, PageLinks
from schemas.vocab import Expect, Outcome, Via

PAGE = b"""<html><head><title>t</title>
<link rel="alternate" type="application/rss+xml" href="/feed.xml">
<link rel="alternate" type="application/atom+xml" href="javascript:alert(1)">
</head><body></body></html>"""


def crawler_for(tmp_path: Path, **settings: Any) -> Crawler:
    """A configured crawler of the census spider writing to ``tmp_path/out``; its spider is built too."""
    import crawler.settings as project

    base = {k: getattr(project, k) for k in dir(project) if k.isupper()}
    # No document workers: these components run in this process, with no event loop to join a worker to.
    base["FEEDCENSUS_WORKERS"] = 0
    crawler = get_crawler(CensusSpider, {**base, "FEEDCENSUS_OUT": str(tmp_path / "out"), **settings})
    crawler.spider = crawler._create_spider(url=["http://127.0.0.1:9/feed.xml"])
    return crawler


def buffered(crawler: Crawler, table: str) -> list[dict[str, Any]]:
    """Rows the dataset holds for its next commit."""
    return list(dataset_of(crawler).writer._rows[table])


def html_response(url: str, ctx: FetchContext, body: bytes = PAGE) -> HtmlResponse:
    request = make_request(url, ctx, callback=None, errback=None)
    return HtmlResponse(url, body=body, request=request, headers={"Content-Type": "text/html"})


# --- the dataset extension and the Parquet pipeline ------------------------------------


def test_the_dataset_is_one_extension_found_by_every_component(tmp_path: Path) -> None:
    crawler = crawler_for(tmp_path, FEEDCENSUS_JOB_ID="j1")
    dataset = crawler.get_extension(Dataset)
    assert dataset is not None and dataset.job_id == "j1" and dataset.out == str(tmp_path / "out")
    assert ParquetPipeline.from_crawler(crawler).dataset is dataset
    assert RobotsLogMiddleware.from_crawler(crawler).dataset is dataset
    assert ReflexivePipeline.from_crawler(crawler).dataset is dataset


def test_dataset_hooks_run_in_the_declared_order_of_their_roles(tmp_path: Path) -> None:
    """The order of HOOK_ROLES, not the order the extensions were built in, is the order hooks run in."""
    dataset = crawler_for(tmp_path).get_extension(Dataset)
    assert dataset is not None
    ran: list[str] = []
    for role in reversed(HOOK_ROLES):  # added last role first
        dataset.add_hook("on_take", role, lambda role=role: ran.append(role))
    dataset.add_hook("on_take", "journal", lambda: ran.append("journal again"))
    for hook in dataset.hooks("on_take"):
        hook()
    assert ran == ["journal", "journal again", *HOOK_ROLES[1:]]
    with pytest.raises(ValueError, match="no dataset hook role 'progress'"):
        dataset.add_hook("on_take", "progress", lambda: None)
    with pytest.raises(ValueError, match="no dataset hook point"):
        dataset.add_hook("on_open", "journal", lambda: None)  # type: ignore[arg-type]


def test_an_output_that_cannot_be_written_is_refused_before_the_crawl(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(DatasetError, match="cannot write to"):
        crawler_for(tmp_path, FEEDCENSUS_OUT=str(blocker / "out"))


def test_the_pipeline_buffers_rows_and_counts_fetch_records(tmp_path: Path) -> None:
    crawler = crawler_for(tmp_path)
    pipeline = ParquetPipeline.from_crawler(crawler)
    rec = FetchRecord(url="http://a.example/", outcome=Outcome.PAGE, discovered_via=Via.SEED, depth=0)
    assert asyncio.run(pipeline.process_item(rec)) is rec
    assert [r["url"] for r in buffered(crawler, "fetch_log")] == ["http://a.example/"]
    assert crawler.stats is not None and crawler.stats.get_value("feedcensus/outcome/page") == 1


def test_a_dropped_request_is_one_duplicate_row_with_its_context(tmp_path: Path) -> None:
    crawler = crawler_for(tmp_path)
    pipeline = ParquetPipeline.from_crawler(crawler)
    ctx = FetchContext(via=Via.AUTODISCOVERY, source="http://a.example/", depth=2, kind=Expect.FEED)
    pipeline.request_dropped(make_request("http://a.example/feed", ctx, callback=None, errback=None))
    (row,) = buffered(crawler, "fetch_log")
    assert (row["outcome"], row["discovered_via"], row["depth"], row["source"]) == (
        "duplicate",
        "autodiscovery",
        2,
        "http://a.example/",
    )


# --- the request builder ----------------------------------------------------------------


def test_requests_carry_their_context_and_go_breadth_first() -> None:
    ctx = FetchContext(via=Via.OPML, source="list.opml", depth=3, kind=Expect.FEED)
    request = make_request("http://a.example/f", ctx, callback=None, errback=None, priority_bias=-1)
    assert context_of(request) is ctx and request.priority == -4
    child = ctx.child(Via.AUTODISCOVERY, "http://a.example/", Expect.FEED)
    assert (child.depth, child.via, child.include_depth) == (4, Via.AUTODISCOVERY, 0)
    assert FetchContext.from_json(json.loads(json.dumps(ctx.to_json()))) == ctx
    nested = FetchContext(via=Via.OPML, source=None, depth=2, kind=Expect.OPML, include_depth=2)
    assert FetchContext.from_json(json.loads(json.dumps(nested.to_json()))) == nested
    # to_json names every field (a field added to the class and not to to_json would be lost in a journal)
    assert list(ctx.to_json()) == [f.name for f in dataclasses.fields(FetchContext)]


# --- the spider -------------------------------------------------------------------------


def test_start_yields_requests_for_inputs_and_records_for_bad_ones(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://site.example/\nnot a url at all\n", encoding="utf-8")
    crawler = crawler_for(tmp_path)
    spider = crawler._create_spider(seeds=str(seeds), url=["ftp://x.example/f"], opml=[str(tmp_path / "none.opml")])
    assert isinstance(spider, CensusSpider)
    crawler.spider = spider

    async def collect() -> list[Any]:
        return [o async for o in spider.start()]

    out = asyncio.run(collect())
    requests = [o for o in out if isinstance(o, Request)]
    records = [o for o in out if isinstance(o, FetchRecord)]
    assert [(r.url, context_of(r).via, context_of(r).kind) for r in requests] == [
        ("http://site.example/", Via.SEED, Expect.PAGE)
    ]
    assert sorted(r.outcome for r in records) == ["input_error", "input_error", "unsupported_scheme"]
    assert spider.input_hosts == {"site.example"}  # hosts of URLs that can be requested


def test_start_uses_the_inputs_it_is_given_and_does_not_read_them_again(tmp_path: Path) -> None:
    # `feedcensus crawl` reads the inputs to refuse a crawl with none usable, then gives them to the spider.
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://site.example/\n", encoding="utf-8")
    given = read_inputs([str(seeds)], [], [])
    seeds.write_text("http://other.example/\n", encoding="utf-8")  # a second read would see this
    crawler = crawler_for(tmp_path)
    spider = crawler._create_spider(seeds=str(seeds), inputs=given)
    assert isinstance(spider, CensusSpider)
    crawler.spider = spider

    async def collect() -> list[Any]:
        return [o async for o in spider.start()]

    assert [o.url for o in asyncio.run(collect())] == ["http://site.example/"]
    assert spider.input_hosts == {"site.example"} and spider.inputs is None  # not held past start()
    assert given.requests == [] and given.count == 0  # taken out of the object the command still holds


# --- the autodiscovery middleware -------------------------------------------------------


def test_autodiscovery_runs_on_pages_the_spider_marked_html(tmp_path: Path) -> None:
    crawler = crawler_for(tmp_path)
    mw = AutodiscoveryMiddleware.from_crawler(crawler)
    ctx = FetchContext(via=Via.SEED, source="seeds.txt", depth=0, kind=Expect.PAGE)
    response = html_response("http://site.example/", ctx)
    page = FetchRecord.for_context(ctx, response.url, Outcome.PAGE, html=True)
    out = list(mw.process_spider_output(response, [page]))
    assert not [o for o in out if isinstance(o, FetchRecord)]  # the page's record travels in its PageLinks item
    (links,) = [o for o in out if isinstance(o, PageLinks)]
    assert out[0] is links and links.record is page
    assert [link.href for link in links.links] == ["http://site.example/feed.xml", "javascript:alert(1)"]
    assert links.followed == [True, False]
    (request,) = [o for o in out if isinstance(o, Request)]
    assert request.url == "http://site.example/feed.xml" and request.priority == -1
    assert context_of(request) == FetchContext(
        via=Via.AUTODISCOVERY, source="http://site.example/", depth=1, kind=Expect.FEED
    )
    assert crawler.stats is not None and crawler.stats.get_value("autodiscovery/pages") == 1


def test_autodiscovery_leaves_responses_that_are_not_pages_alone(tmp_path: Path) -> None:
    crawler = crawler_for(tmp_path)
    mw = AutodiscoveryMiddleware.from_crawler(crawler)
    ctx = FetchContext(via=Via.URL, source="input", depth=0, kind=Expect.ANY)
    record = FetchRecord.for_context(ctx, "http://site.example/x", Outcome.NOT_FEED)
    assert list(mw.process_spider_output(html_response("http://site.example/x", ctx), [record])) == [record]


def test_autodiscovery_can_be_switched_off(tmp_path: Path) -> None:
    with pytest.raises(NotConfigured):
        AutodiscoveryMiddleware.from_crawler(crawler_for(tmp_path, AUTODISCOVERY_ENABLED=False))


# --- network safety, robots log, reflexive ------------------------------------------------


def test_network_safety_refuses_private_targets_found_in_content(tmp_path: Path) -> None:
    crawler = crawler_for(tmp_path)
    mw = NetworkSafetyMiddleware.from_crawler(crawler)
    ctx = FetchContext(via=Via.AUTODISCOVERY, source="http://site.example/", depth=1, kind=Expect.FEED)
    with pytest.raises(RefusedRequest, match="refused"):
        asyncio.run(mw.process_request(make_request("http://10.0.0.1/feed", ctx, callback=None, errback=None)))
    # A host the user named (start() collects them) is trusted, even on loopback.
    crawler.spider.input_hosts = {"127.0.0.1"}  # type: ignore[union-attr]
    assert (
        asyncio.run(mw.process_request(make_request("http://127.0.0.1:9/f", ctx, callback=None, errback=None))) is None
    )


def test_robots_requests_get_a_fetch_log_row_and_census_requests_do_not(tmp_path: Path) -> None:
    crawler = crawler_for(tmp_path)
    mw = RobotsLogMiddleware.from_crawler(crawler)
    robots = Request("http://site.example/robots.txt", meta={"dont_obey_robotstxt": True})
    mw.process_response(robots, Response(robots.url, status=404, request=robots))
    ctx = FetchContext(via=Via.SEED, source="s", depth=0, kind=Expect.PAGE)
    page = make_request("http://site.example/robots.txt", ctx, callback=None, errback=None)
    page.meta["dont_obey_robotstxt"] = True
    mw.process_response(page, Response(page.url, status=200, request=page))
    (row,) = buffered(crawler, "fetch_log")
    assert (row["url"], row["outcome"], row["status"], row["discovered_via"]) == (robots.url, "robots", 404, "robots")


def test_reflexive_pipeline_is_off_with_its_setting(tmp_path: Path) -> None:
    with pytest.raises(NotConfigured):
        ReflexivePipeline.from_crawler(crawler_for(tmp_path, FEEDCENSUS_REFLEXIVE=False))


# --- resume: the journal and the duplicate filter ------------------------------------------


def test_the_journal_keeps_each_scheduled_request_with_its_context(tmp_path: Path) -> None:
    crawler = crawler_for(tmp_path, FEEDCENSUS_RESUME_DIR=str(tmp_path / "state"))
    journal = crawler.get_extension(CrawlJournal)
    assert journal is not None and journal.previous == []
    ctx = FetchContext(via=Via.INCLUDE, source="a.opml", depth=2, kind=Expect.OPML, include_depth=2)
    journal.request_scheduled(make_request("http://a.example/b.opml", ctx, callback=None, errback=None))
    redirected = make_request("http://a.example/c", ctx, callback=None, errback=None)
    redirected.meta["redirect_urls"] = ["http://a.example/old"]
    journal.request_scheduled(redirected)  # redone by requesting the original again: not journaled
    journal.request_scheduled(Request("http://a.example/robots.txt"))  # not the census's
    journal.spider_closed()
    (entry,) = read_journal(tmp_path / "state" / JOURNAL_FILE)
    assert (entry.url, entry.context) == ("http://a.example/b.opml", ctx)


def test_the_duplicate_filter_drops_what_the_dataset_says_is_written(tmp_path: Path) -> None:
    crawler = crawler_for(tmp_path)
    dataset = dataset_of(crawler)
    dataset.done = {"http://a.example/written"}
    dupefilter = ResumeDupeFilter.from_crawler(crawler)
    assert dupefilter.request_seen(Request("http://a.example/written"))
    assert not dupefilter.request_seen(Request("http://a.example/new"))
    assert dupefilter.request_seen(Request("http://a.example/new"))


# --- the interpreter settings a crawl holds while its engine runs -------------------------------


@pytest.fixture
def interpreter() -> Iterator[None]:
    """Puts the process's switch interval and garbage collector back after the test, whatever it did,
    and forgets the engines the extensions counted (so a failed test does not leave a count behind)."""
    interval, thresholds, frozen = sys.getswitchinterval(), gc.get_threshold(), gc.get_freeze_count()
    yield
    sys.setswitchinterval(interval)
    gc.set_threshold(*thresholds)
    if frozen == 0:
        gc.unfreeze()
    _HELD.clear()


def engines(tmp_path: Path, n: int, **settings: Any) -> list[Crawler]:
    return [crawler_for(tmp_path / str(i), **settings) for i in range(n)]


def test_the_switch_interval_is_the_crawls_while_the_engine_runs_then_put_back(
    tmp_path: Path, interpreter: None
) -> None:
    crawler = crawler_for(tmp_path, FEEDCENSUS_SWITCH_INTERVAL=0.0007)
    assert crawler.get_extension(SwitchInterval) is not None  # enabled by the project's settings
    before = sys.getswitchinterval()
    crawler.signals.send_catch_log(signals.engine_stopped)  # a stop without a start changes nothing
    assert sys.getswitchinterval() == pytest.approx(before)
    crawler.signals.send_catch_log(signals.engine_started)
    assert sys.getswitchinterval() == pytest.approx(0.0007)
    crawler.signals.send_catch_log(signals.engine_stopped)
    assert sys.getswitchinterval() == pytest.approx(before)


#: The extensions that set an interpreter setting while the engine runs: (setting, the crawl's value, how
#: to read the process's value). (crawler_for gives every crawler both extensions; the fixture puts both back.)
PROCESS_SETTINGS = [
    pytest.param("FEEDCENSUS_SWITCH_INTERVAL", 0.0007, sys.getswitchinterval, id="switch-interval"),
    pytest.param("FEEDCENSUS_GC_THRESHOLD", 12345, lambda: gc.get_threshold()[0], id="gc-threshold"),
]


@pytest.mark.parametrize(("setting", "value", "read"), PROCESS_SETTINGS)
def test_the_process_value_is_put_back_when_the_last_of_two_engines_stops(
    tmp_path: Path, interpreter: None, setting: str, value: float, read: Callable[[], float]
) -> None:
    before = read()
    first, second = engines(tmp_path, 2, **{setting: value})
    first.signals.send_catch_log(signals.engine_started)
    second.signals.send_catch_log(signals.engine_started)
    first.signals.send_catch_log(signals.engine_stopped)
    assert read() == pytest.approx(value)  # the second still runs
    second.signals.send_catch_log(signals.engine_stopped)
    assert read() == pytest.approx(before)


def test_a_subclass_counts_its_engines_with_the_extension_it_extends(tmp_path: Path, interpreter: None) -> None:
    class Slower(SwitchInterval):
        pass

    first, second = engines(tmp_path, 2, FEEDCENSUS_SWITCH_INTERVAL=0)  # the project's extension off
    before = sys.getswitchinterval()
    extensions = [SwitchInterval(first, 0.0007), Slower(second, 0.0009)]  # kept: signals hold weak references
    first.signals.send_catch_log(signals.engine_started)
    second.signals.send_catch_log(signals.engine_started)
    assert sys.getswitchinterval() == pytest.approx(0.0007)  # the first engine's value holds
    first.signals.send_catch_log(signals.engine_stopped)
    second.signals.send_catch_log(signals.engine_stopped)
    assert sys.getswitchinterval() == pytest.approx(before)
    assert not any(extension.started for extension in extensions)


def test_a_switch_interval_of_zero_leaves_the_interval_alone(tmp_path: Path) -> None:
    with pytest.raises(NotConfigured):
        SwitchInterval.from_crawler(crawler_for(tmp_path, FEEDCENSUS_SWITCH_INTERVAL=0))


def test_the_collector_threshold_is_the_crawls_while_the_engine_runs_then_put_back(
    tmp_path: Path, interpreter: None
) -> None:
    gc.unfreeze()  # a process that froze nothing itself
    first, second = engines(tmp_path, 2, FEEDCENSUS_GC_THRESHOLD=12345)
    assert first.get_extension(GcThreshold) is not None  # enabled by the project's settings
    before = gc.get_threshold()
    first.signals.send_catch_log(signals.engine_stopped)  # a stop without a start changes nothing
    assert gc.get_threshold() == before
    first.signals.send_catch_log(signals.engine_started)
    assert gc.get_threshold() == (12345, before[1], before[2])
    frozen = gc.get_freeze_count()
    assert frozen > 0  # the live objects are out of the collector's sight
    second.signals.send_catch_log(signals.engine_started)
    first.signals.send_catch_log(signals.engine_stopped)
    # Still frozen while the second engine runs (the count only falls: a frozen object can still be freed).
    assert 0 < gc.get_freeze_count() <= frozen
    second.signals.send_catch_log(signals.engine_stopped)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0  # handed back to the collector


def test_a_process_that_froze_objects_itself_keeps_its_freeze(tmp_path: Path, interpreter: None) -> None:
    gc.freeze()
    crawler = crawler_for(tmp_path, FEEDCENSUS_GC_THRESHOLD=12345)  # thousands of objects, not frozen
    frozen = gc.get_freeze_count()  # (it only falls from here: a frozen object can still be freed)
    crawler.signals.send_catch_log(signals.engine_started)
    assert gc.get_threshold()[0] == 12345  # the threshold is the crawl's all the same
    assert gc.get_freeze_count() <= frozen  # the crawler's objects were not frozen by the crawl
    crawler.signals.send_catch_log(signals.engine_stopped)
    assert gc.get_freeze_count() > 0  # and the process's freeze was not undone


def test_a_fractional_collector_threshold_does_not_turn_collection_off(tmp_path: Path, interpreter: None) -> None:
    crawler = crawler_for(tmp_path, FEEDCENSUS_GC_THRESHOLD=0.5)
    crawler.signals.send_catch_log(signals.engine_started)
    assert gc.get_threshold()[0] == 1  # not 0, which would stop automatic collection
    crawler.signals.send_catch_log(signals.engine_stopped)


def test_a_collector_threshold_of_zero_leaves_the_collector_alone(tmp_path: Path) -> None:
    with pytest.raises(NotConfigured):
        GcThreshold.from_crawler(crawler_for(tmp_path, FEEDCENSUS_GC_THRESHOLD=0))


# --- the stats collector ---------------------------------------------------------------------------


def test_the_crawl_counts_with_the_census_stats_collector(tmp_path: Path) -> None:
    crawler = crawler_for(tmp_path)
    crawler._apply_settings()  # what a crawl does first: it makes the stats collector named by STATS_CLASS
    stats = crawler.stats
    assert type(stats) is CensusStats
    stats.inc_value("a")
    stats.inc_value("a", 2)
    stats.inc_value("b", start=10)
    stats.max_value("hi", 3)
    stats.max_value("hi", 1)
    stats.min_value("lo", 3)
    stats.min_value("lo", 5)
    stats.set_value("v", "x", spider=None)  # the deprecated argument is still taken, and ignored
    assert stats.get_stats() == {"a": 3, "b": 11, "hi": 3, "lo": 3, "v": "x"}
    assert stats.get_value("missing", 7) == 7


def test_the_census_stats_collector_skips_scrapys_lookup_on_every_attribute() -> None:
    """Scrapy 2.19's collector looks each attribute up under a ``_cached_`` name first (crawler/stats.py)."""
    from scrapy.statscollectors import MemoryStatsCollector

    assert MemoryStatsCollector.__getattribute__ is not object.__getattribute__  # what the class is for
    # mypy types the class attribute as if bound, so it sees no overlap; at run time it is object's function
    assert CensusStats.__getattribute__ is object.__getattribute__  # type: ignore[comparison-overlap]
    stats = CensusStats(get_crawler())
    stats.inc_value("a")
    assert not [name for name in vars(stats) if name.startswith("_cached_")]


# --- the request fingerprinter ---------------------------------------------------------------------


def test_the_crawl_fingerprints_requests_as_scrapy_does(tmp_path: Path) -> None:
    """Same bytes as Scrapy's fingerprint for every request: canonical URLs (the fast path) and the rest."""
    import random

    from scrapy.utils.request import fingerprint

    from crawler.fingerprint import _CANONICAL, CensusFingerprinter

    crawler = crawler_for(tmp_path)
    crawler._apply_settings()
    assert type(crawler.request_fingerprinter) is CensusFingerprinter
    rng = random.Random(7)
    pieces = ["a", "Z", "0", "-", ".", "..", "_", "~", "!", "$", "&", "'", "(", ")", "*", "+", ",", ";", "=", ":"]
    pieces += ["@", "%41", "%7e", "%zz", "[", "]", "|", " ", '"', "\\", "é", "/", "//", "/./", "/../", "?", "#"]
    hosts = ["site.example", "Site.Example", "127.0.1.1:37399", "a.example:80", "xn--nxasmq6b.example", "a.example:"]
    urls = [
        "http://127.0.1.1:37399/s0/",
        "https://a.example/feed.xml",
        "http://a.example/x?b=2&a=1",
        "http://a.example/x#top",
        "http://a.example/.well-known/feed",
        "http://a.example/a/../b",
        "http://a.example",
    ]
    for _ in range(3000):
        path = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        urls.append(f"{rng.choice(['http', 'https', 'HTTP'])}://{rng.choice(hosts)}/{path}")
    fast = 0
    for url in urls:
        for request in (
            Request(url),
            Request(url, method="POST", body=b"x=1"),
            Request(url, meta={"verbatim_url": True}),
            Request(url, method="PRÜFEN"),  # escaped in Scrapy's JSON: not the fast path
        ):
            assert crawler.request_fingerprinter.fingerprint(request) == fingerprint(request), url
        fast += _CANONICAL.fullmatch(Request(url).url) is not None
    assert 300 < fast < len(urls)  # both paths were taken
