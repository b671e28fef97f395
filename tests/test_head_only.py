"""Body feed links are followed by default; ``--head-only`` is the strict reading of the autodiscovery specs."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.cli import build_parser
from crawler.cli.crawl import options_of
from crawler.cli.options import crawl_settings
from crawler.fetch.discovery import discover

BODY_LINK = (
    b'<html><head><title>t</title></head><body><link rel="alternate" type="application/rss+xml" href="/f"></body>'
)


@pytest.mark.parametrize(
    ("flags", "follow"),
    [
        ([], True),
        (["--head-only"], False),
        (["--follow-body-links"], True),
        (["--follow-body-links", "--head-only"], False),
    ],
)
def test_head_only_sets_the_setting(tmp_path: Path, flags: list[str], follow: bool) -> None:
    args = build_parser().parse_args(["crawl", "--seeds", "s.txt", "--out", str(tmp_path), *flags])
    settings = crawl_settings(args)
    assert settings.getbool("FEEDCENSUS_FOLLOW_BODY_LINKS") is follow
    assert options_of(args)["head_only"] is ("--head-only" in flags)


def test_a_body_link_is_followed_by_default_and_still_marked() -> None:
    (link,) = discover(BODY_LINK, "http://example.com/")
    assert link.followable and link.in_head is False and "not-in-head" in link.reasons
    assert link.conforms_rss is False
    (strict,) = discover(BODY_LINK, "http://example.com/", follow_body=False)
    assert not strict.followable and strict.reasons == link.reasons
