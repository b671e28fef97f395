"""Reading a survey's measures back, and the peer's figures paired with ours (:data:`PEER_FIGURES`)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class PeerFigure:
    """One figure of the peer's report, the measure of ours that answers it, and why they may differ.

    ``peer`` is a key of the peer's ``build_report_stats`` (dots go into nested dicts); ``ours`` a
    measure key of a breadth table, or ``table:<name>`` for a figure that is a whole table.
    ``agree``: the two must be equal on the side-by-side web unless ``reason`` applies there.
    """

    peer: str
    ours: str
    reason: str = ""
    agree: bool = False


# --- reading back, and the peer ------------------------------------------------------------------


def read_measures(report_dir: Path) -> dict[str, Any]:
    """Every measure of the breadth tables a survey wrote as CSV, by key (numbers as int or float)."""
    found: dict[str, Any] = {f"table:{path.stem}": path.stem for path in sorted(report_dir.glob("*.csv"))}
    for path in sorted(report_dir.glob("breadth_*.csv")):
        with path.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh):
                if "key" in row:
                    found[row["key"]] = _number(row["value"])
    return found


def _number(text: str) -> Any:
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def peer_value(figures: dict[str, Any], key: str) -> Any:
    """A figure of the peer's ``build_report_stats`` by dotted key; a table figure by its name."""
    value: Any = figures
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    if isinstance(value, list | dict):
        return f"table:{key}"
    return value


_REL_FEED = (
    "the peer also counts the target of a link with rel=feed alone, which neither autodiscovery spec accepts: "
    "our links table has no row for it (pages.rel_feed marks its page)"
)
_LENGTHS = "needs items.content_length and items.description_length (shown empty before they are written)"
_ENTRY_LANG = "the peer reads xml:lang on any element inside an item; ours feeds.entry_languages"
_QUALITY = (
    "the score's inputs differ where noted: content kind per item (the peer: per element), item links only "
    "(the peer: every Atom link of an entry), and the inputs a dataset without items.content_length, "
    "content_kind or feeds.feed_date lacks"
)
#: Every figure of the peer's report and the measure of ours that answers it (docs/survey-breadth.md).
PEER_FIGURES: tuple[PeerFigure, ...] = (
    PeerFigure("responses_processed", "responses_processed", agree=True),
    PeerFigure("pages_seen", "html_pages", agree=True),
    PeerFigure("html_responses", "html_responses", "", agree=True),
    PeerFigure("sites_seen", "sites_seen", agree=True),
    PeerFigure("feed_results_count", "feed_urls_checked", agree=True),
    PeerFigure("parsed_feeds", "feeds_parsed_strict", agree=True),
    PeerFigure("unparsed_feeds", "feeds_unparsed_strict", agree=True),
    PeerFigure("parse_success_pct", "table:breadth_run", "a percentage of feeds_parsed_strict in breadth_run"),
    PeerFigure("unparsed_pct", "table:breadth_run", "a percentage of feeds_unparsed_strict in breadth_run"),
    PeerFigure("rss_count", "feeds_rss_family", agree=True),
    PeerFigure("atom_count", "feeds_atom", agree=True),
    PeerFigure("formats", "table:breadth_run", "formats and versions: the survey's formats table"),
    PeerFigure("sites_with_feeds_found", "sites_with_feeds", agree=True),
    PeerFigure("total_entries", "items_total", "the peer does not count Atom entries of an un-namespaced feed"),
    PeerFigure("feeds_with_autodiscovery", "feeds_advertised", _REL_FEED, agree=True),
    PeerFigure("feeds_without_autodiscovery", "feeds_not_advertised", _REL_FEED, agree=True),
    PeerFigure("pages_with_autodiscovery", "pages_with_feed_links", agree=True),
    PeerFigure("sites_with_autodiscovery", "sites_with_feed_links", agree=True),
    PeerFigure("discovery_rel_alternate", "pages_rel_alternate", agree=True),
    PeerFigure("discovery_rel_feed", "pages_rel_feed", agree=True),
    PeerFigure("discovery_rel_both_page", "pages_rel_both", agree=True),
    PeerFigure("discovery_multi_rel_url", "multi_rel_links", "a runtime counter the peer never increments"),
    PeerFigure("discovery_link_rel_both", "multi_rel_links", agree=True),
    PeerFigure("discovery_link_rel_both_page", "pages_multi_rel", agree=True),
    PeerFigure("discovery_link_rel_both_page_known", "pages_multi_rel", "a flag (whether the count is known)"),
    PeerFigure("discovery_pages_with_duplicates", "pages_format_pairs", agree=True),
    PeerFigure("discovery_multi_feed_pages", "pages_multi_feed", agree=True),
    PeerFigure("discovery_duplicate_format_pairs", "table:breadth_format_pairs"),
    PeerFigure("discovery_per_page_hist", "table:breadth_feeds_per_page"),
    PeerFigure("html_fingerprints", "table:breadth_autodiscovery_platforms"),
    PeerFigure("fingerprint_prevalence", "table:breadth_platforms"),
    PeerFigure("source_fingerprint_quality", "table:breadth_platforms"),
    PeerFigure("extension_prevalence", "table:namespaces", "the survey's namespaces and element tables"),
    PeerFigure("feed_link_signals", "table:breadth_hygiene"),
    PeerFigure("feeds_with_content", "content_full", _LENGTHS, agree=True),
    PeerFigure("feeds_with_summary", "content_summary", _LENGTHS, agree=True),
    PeerFigure("feeds_with_neither", "content_title_only", _LENGTHS + "; ours counts only feeds with items"),
    PeerFigure("content_profile_dist", "table:breadth_content"),
    PeerFigure("content_profile_prevalence", "table:breadth_content"),
    PeerFigure("feeds_with_entries", "feeds_with_items", agree=True),
    PeerFigure(
        "feeds_with_entry_dates",
        "feeds_with_item_dates",
        "the peer reads dates dateutil can parse, ours the RFC 822 / ISO 8601 reader's",
        agree=True,
    ),
    PeerFigure(
        "feeds_with_updated_date",
        "feeds_with_feed_date",
        "the peer prefers lastBuildDate/updated; a feed with only an unparseable one differs",
        agree=True,
    ),
    PeerFigure(
        "feeds_with_repeated_entry_titles",
        "feeds_repeated_titles",
        "titles as each parser reads them: the peer takes the element's text, ours the item title as "
        "text (entities and markup decoded)",
        agree=True,
    ),
    PeerFigure("feeds_with_default_entry_titles", "feeds_default_titles", agree=True),
    PeerFigure(
        "feeds_with_repeated_entry_links",
        "feeds_repeated_links",
        "the peer groups every Atom link of an entry (replies, enclosures), ours the item's link",
        agree=True,
    ),
    PeerFigure("languages", "table:breadth_language_values"),
    PeerFigure("language_prevalence", "table:breadth_language_values"),
    PeerFigure("lang_src_http", "lang_http", "the peer reads Content-Language case-sensitively", agree=True),
    PeerFigure("lang_src_feed", "lang_feed", agree=True),
    PeerFigure("lang_src_entry", "lang_entry", "the peer reads xml:lang on any element inside an item", agree=True),
    PeerFigure("lang_http_feed", "lang_http_and_feed", agree=True),
    PeerFigure("lang_mismatches", "lang_mismatch_http", agree=True),
    PeerFigure("lang_hreflang", "lang_hreflang", agree=True),
    PeerFigure("lang_multiple_entry_languages", "lang_several", _ENTRY_LANG, agree=True),
    PeerFigure("lang_multiple_in_feed", "lang_several", "the peer also counts xml:lang values outside items"),
    PeerFigure("lang_no_info", "lang_none", _ENTRY_LANG, agree=True),
    PeerFigure("lang_count_hist", "table:breadth_language_values", "computed, not shown by the peer"),
    PeerFigure("update_cadence_cdf", "table:breadth_cadence", "buckets here, a CDF there (same interval)"),
    PeerFigure("update_cadence_cdf.no_cadence", "feeds_with_cadence", "ours counts feeds with one, it those without"),
    PeerFigure("feed_recency_cdf", "table:breadth_newest_age", "ours: the newest item's age (else the feed date)"),
    PeerFigure("entry_recency_cdf", "table:breadth_newest_age"),
    PeerFigure("n_zero_entry", "feeds_with_items", "ours counts feeds with items, it those without"),
    PeerFigure("quality_hist", "table:breadth_quality"),
    PeerFigure("quality_split_threshold", "table:breadth_quality", "a constant (0.5)"),
    PeerFigure("quality_split_count", "quality_feeds", _QUALITY, agree=True),
    PeerFigure("mean_quality", "quality_mean", _QUALITY, agree=True),
    PeerFigure("active_quality.n", "quality_active", agree=True),
    PeerFigure("active_quality.with_entries", "funnel_active_entries", agree=True),
    PeerFigure("active_quality.without_entries", "table:breadth_funnel", "quality_active less funnel_active_entries"),
    PeerFigure("active_quality.pct", "table:breadth_hygiene", "the share column of quality_active"),
    PeerFigure("inactive_quality.n", "table:breadth_hygiene", "quality_inactive_undated plus quality_inactive_stale"),
    PeerFigure("inactive_quality.cutoff_days", "table:breadth_hygiene", "a constant (365, ACTIVE_DAYS)"),
    PeerFigure("active_quality.mean", "quality_active_mean", _QUALITY, agree=True),
    PeerFigure("inactive_quality.undated", "quality_inactive_undated", agree=True),
    PeerFigure("inactive_quality.stale", "quality_inactive_stale", agree=True),
    PeerFigure("error_types", "table:breadth_parse_errors"),
    PeerFigure("total_errors", "feeds_unparsed_strict", agree=True),
    PeerFigure("error_column_rows", "table:breadth_parse_errors", "the same rows in two columns"),
    PeerFigure("content_types_collapsed", "table:breadth_run", "the survey's fetch_log content types"),
    PeerFigure("sniffed_format_counts", "table:breadth_run", "WARC mode only (0 for a list)"),
    PeerFigure("feeds_sniffed", "table:breadth_run", "WARC mode only (0 for a list)"),
)
#: Keys of the peer's figures dict that are settings or labels of its run, not figures.
PEER_NOT_FIGURES = frozenset(
    {
        "is_opml",
        "source_label",
        "max_crawl_time",
        "top_n",
        "tranco_include_subdomains",
        "tranco_list_label",
        "run_limit",
        "quality",
        "active_quality",
        "inactive_quality",
    }
)
