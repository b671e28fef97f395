"""Middlewares know the spider through a small Protocol, not its class (issue #38): any spider with
``follow`` gets autodiscovery; one without is told once, in a warning, instead of silently losing it."""

from __future__ import annotations

import ast
from pathlib import Path

from scrapy import Spider

from crawler.requests import FollowsFeedLinks
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


def test_no_middleware_or_pipeline_names_the_census_spider_class() -> None:
    named = []
    for path in [*(REPO / "crawler" / "middlewares").glob("*.py"), *(REPO / "pipelines").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and any(a.name.endswith("Spider") for a in node.names):
                named.append(f"{path.name}: {node.module}")
    assert named == []
