"""The side by side with the peer survey tool (issue #16): feed-survey 0.1.2 and ``feedcensus survey``.

``benchmarks/bench_peer_survey.py`` serves the generated loopback web (120 sites on 127.0.1.x)
and 60 real feeds of ``../shared/corpus/benchmark_feeds`` (on 127.0.2.x, with pages advertising
them by rel=alternate, rel=feed, both, and RSS+Atom pairs), lists them all in one OPML file, runs
the peer's ``feed-survey-opml`` on it (its figures kept as data) and ``feedcensus crawl --opml`` +
``feedcensus survey`` on the same list. Every figure of the peer must have one of ours; the counts
that must agree agree, or differ for the reason written beside them (docs/survey-breadth.md).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from crawler.report.breadth import PEER_FIGURES, PEER_NOT_FIGURES
from tests.conftest import CORPUS, REPO

pytest.importorskip("feed_survey", reason="the peer (feed-survey, in the test extra) is not installed")
sys.path.insert(0, str(REPO / "benchmarks"))
import bench_peer_survey as bench

#: Counts that depend on nothing either tool may read differently: they must be equal.
EXACT = {
    "responses_processed", "pages_seen", "html_responses", "sites_seen", "feed_results_count", "parsed_feeds",
    "unparsed_feeds", "rss_count", "atom_count", "sites_with_feeds_found", "pages_with_autodiscovery",
    "sites_with_autodiscovery", "discovery_rel_alternate", "discovery_rel_feed", "discovery_rel_both_page",
    "discovery_link_rel_both", "discovery_link_rel_both_page", "discovery_pages_with_duplicates",
    "discovery_multi_feed_pages", "feeds_with_entries", "total_errors", "lang_src_feed",
    "active_quality.n", "inactive_quality.undated", "inactive_quality.stale",
}  # fmt: skip


@pytest.fixture(scope="module")
def side_by_side(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if not CORPUS.joinpath("benchmark_feeds").is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    work = tmp_path_factory.mktemp("peer")
    with bench.loopback_web(120, 60, work) as outlines:
        opml = bench.write_opml(outlines, work / "list.opml")
        peer = bench.run_peer(opml, work)
        report = bench.run_ours(opml, work)
    rows = bench.compare(peer, bench.our_figures(report))
    (work / "side-by-side.md").write_text(bench.markdown(rows), encoding="utf-8")
    print(bench.markdown(rows))
    return {"peer": peer, "rows": {r.figure: r for r in rows}, "report": report}


def test_every_peer_figure_has_one_of_ours(side_by_side: dict[str, Any]) -> None:
    peer, rows = side_by_side["peer"], side_by_side["rows"]
    figures = {k for k in peer if k not in PEER_NOT_FIGURES}
    figures |= {f"{k}.{sub}" for k in ("active_quality", "inactive_quality") for sub in peer[k]}
    mapped = {f.peer for f in PEER_FIGURES}
    missing = figures - mapped
    assert not missing, f"peer figures without one of ours: {sorted(missing)}"
    for name, row in rows.items():
        assert row.ours is not None, f"{name}: our measure or table {row.ours_key} is not in the survey"


def test_counts_agree_or_differ_for_a_documented_reason(side_by_side: dict[str, Any]) -> None:
    rows = side_by_side["rows"]
    # the web is varied enough for the counts to mean something
    assert rows["parsed_feeds"].theirs > 150 and rows["atom_count"].theirs > 30
    assert rows["discovery_rel_feed"].theirs > 0 and rows["discovery_pages_with_duplicates"].theirs > 0
    assert rows["unparsed_feeds"].theirs > 0
    for name in EXACT:
        row = rows[name]
        assert row.same, f"{name}: ours {row.ours} ({row.ours_key}), peer {row.theirs}"
    docs = (REPO / "docs" / "survey-breadth.md").read_text(encoding="utf-8")
    for f in PEER_FIGURES:
        row = rows[f.peer]
        if f.agree and not row.same:
            assert f.reason, f"{f.peer} differs (ours {row.ours}, peer {row.theirs}) with no reason"
        assert f"`{f.peer}`" in docs, f"{f.peer} is not in docs/survey-breadth.md"


def test_side_by_side_table_is_written(side_by_side: dict[str, Any]) -> None:
    text = bench.markdown(list(side_by_side["rows"].values()))
    assert text.count("\n") == len(PEER_FIGURES) + 2
    assert "| feed_results_count | feed_urls_checked |" in text


def test_peer_figures_path_is_read_by_key() -> None:
    figures = {"a": {"b": 3}, "t": [1, 2]}
    from crawler.report.breadth import peer_value

    assert peer_value(figures, "a.b") == 3
    assert peer_value(figures, "t") == "table:t"
    assert peer_value(figures, "a.c") is None
    assert Path(bench.__file__).parent == REPO / "benchmarks"
