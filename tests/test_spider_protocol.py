"""Middlewares and pipelines know the spider through small Protocols, not its class (issue #38): any spider
with ``follow`` gets autodiscovery (one without is told once, in a warning, instead of silently losing it),
any spider with ``page`` gets the reflexive pipeline's page requests, and the hosts a spider names in
``input_hosts`` are the ones the network-safety middleware trusts."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from scrapy import Spider
from scrapy.utils.test import get_crawler

import crawler.settings as project
from crawler.middlewares.netsafety import NetworkSafetyMiddleware
from crawler.requests import FollowsFeedLinks, FollowsLinks, NamesInputHosts
from crawler.spiders.archive import ArchiveSpider
from crawler.spiders.census import CensusSpider

REPO = Path(__file__).resolve().parents[1]


class LinkSpider(Spider):
    name = "links"

    def follow(self, url: str, ctx: object, *, priority_bias: int = 0, conditional: bool = True) -> object:
        return None


def test_the_census_spiders_and_any_spider_with_follow_are_followers() -> None:
    assert issubclass(CensusSpider, FollowsFeedLinks) and issubclass(ArchiveSpider, FollowsFeedLinks)
    assert isinstance(LinkSpider(), FollowsFeedLinks)
    assert not isinstance(Spider(name="plain"), FollowsFeedLinks)


class PageSpider(Spider):
    name = "pages"

    def page(self, url: str, ctx: object) -> object:
        return None


class HostsSpider(Spider):
    name = "hosts"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.input_hosts = {"127.0.0.1"}


def test_the_census_spiders_and_any_spider_with_page_give_the_reflexive_pipeline_pages() -> None:
    assert issubclass(CensusSpider, FollowsLinks) and issubclass(ArchiveSpider, FollowsLinks)
    assert isinstance(PageSpider(), FollowsLinks)
    assert not isinstance(Spider(name="plain"), FollowsLinks)
    assert not isinstance(LinkSpider(), FollowsLinks)  # follow is not page


def network_safety_with(spider_class: type[Spider]) -> NetworkSafetyMiddleware:
    settings = {k: getattr(project, k) for k in dir(project) if k.isupper()}
    crawler = get_crawler(spider_class, settings)
    crawler.spider = crawler._create_spider()
    return NetworkSafetyMiddleware.from_crawler(crawler)


def test_the_network_guard_trusts_the_hosts_a_spider_names_and_none_for_a_spider_that_names_none() -> None:
    assert isinstance(CensusSpider(), NamesInputHosts) and isinstance(HostsSpider(), NamesInputHosts)
    assert not isinstance(Spider(name="plain"), NamesInputHosts)
    assert set(network_safety_with(HostsSpider).trusted_hosts()) == {"127.0.0.1"}
    assert tuple(network_safety_with(LinkSpider).trusted_hosts()) == ()
    assert tuple(network_safety_with(CensusSpider).trusted_hosts()) == ()  # start() has not read its inputs


def test_no_middleware_or_pipeline_names_the_census_spider_class() -> None:
    named = []
    for path in [*(REPO / "crawler" / "middlewares").glob("*.py"), *(REPO / "pipelines").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and any(a.name.endswith("Spider") for a in node.names):
                named.append(f"{path.name}: {node.module}")
    assert named == []
