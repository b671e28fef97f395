"""The command line as a user meets it: lint over the real benchmark feeds, errors as one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import QUICK_CRAWL, run_cli
from tests.test_tally_corpus import BENCH_MANIFEST, BENCHMARK, independent_tally

BENCH = sorted(p for p in BENCHMARK.glob("*") if p.is_file() and p.name != "manifest.tsv") if BENCHMARK.is_dir() else []


@pytest.mark.skipif(not BENCH, reason="benchmark_feeds not found")
def test_lint_json_on_every_benchmark_feed_matches_an_independent_count() -> None:
    proc = run_cli("lint", "--json", *map(str, BENCH), timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [d["source"] for d in lines] == [str(p) for p in BENCH]
    checked = 0
    for doc, path in zip(lines, BENCH, strict=True):
        assert {"source", "format", "version", "well_formed", "channel_elements", "item_elements", "findings"} <= set(
            doc
        )
        assert doc["format"] in ("rss", "rdf", "atom")
        if BENCH_MANIFEST.get(path.name, {}).get("wellformed", "yes") != "yes":
            assert doc["well_formed"] is False
            continue
        channel, _, items_with, n_items = independent_tally(path.read_bytes())
        assert sorted(doc["channel_elements"]) == sorted(channel), path.name
        assert doc["item_elements"] == dict(items_with), path.name
        assert doc["item_count"] == n_items
        for f in doc["findings"]:
            assert f["severity"] in ("error", "warning") and f["count"] > 0 and f["rule"]
        checked += 1
    assert checked >= 190


def test_lint_text_output_and_unreadable_input(tmp_path: Path) -> None:
    feed = tmp_path / "f.xml"
    feed.write_bytes(
        b'<rss version="2.0"><channel><title>T</title><link>http://x/</link><description>d</description>'
        b"<item><title>a</title><pubdate>Mon, 1 Jan 2024 00:00:00 GMT</pubdate></item></channel></rss>"
    )
    proc = run_cli("lint", str(feed), str(tmp_path / "missing.xml"))
    assert proc.returncode == 2
    assert "rss 2.0 well-formed, 1 item" in proc.stdout
    assert "pubdate (1)" in proc.stdout
    (err,) = proc.stderr.strip().splitlines()
    assert "missing.xml" in err and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["crawl", "--seeds", "/nonexistent/seeds.txt", "--out", "OUT"], "cannot read seeds file"),
        (["crawl", "--opml", "/nonexistent/list.opml", "--out", "OUT"], "cannot read OPML file"),
        (["crawl", "--opml", "NOTXML", "--out", "OUT"], "not an OPML document"),
        (["crawl", "--out", "OUT"], "nothing to crawl"),
        (["crawl", "--url", "http://127.0.0.1:9/"], "--out is required"),
        (["crawl", "--url", "ftp://example.com/feed.xml", "--out", "OUT"], "only http and https are fetched, not ftp:"),
        (["crawl", "--url", "javascript:alert(1)", "--out", "OUT"], "not javascript:"),
        (["crawl", "--url", "127.0.0.1:8765/feed.xml", "--out", "OUT"], "did you mean http://127.0.0.1:8765/feed.xml?"),
        (
            ["crawl", "--opml", "localhost:8765/list.opml", "--out", "OUT"],
            "did you mean http://localhost:8765/list.opml?",
        ),
        (["crawl", "--url", "http://127.0.0.1:9/", "--out", "OUT", "-s", "DOWNLOAD_TIMEOUT=abc"], "DOWNLOAD_TIMEOUT"),
        (["crawl", "--url", "http://127.0.0.1:9/", "--out", "OUT", "-s", "ROBOTSTXT_OBEY=perhaps"], "ROBOTSTXT_OBEY"),
        (["survey", "EMPTY"], "no crawl found"),
        (["compact", "EMPTY"], ""),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], needle: str) -> None:
    (tmp_path / "notxml.opml").write_bytes(b"this is not xml at all, just words\n")
    (tmp_path / "empty").mkdir()
    subst = {"OUT": str(tmp_path / "out"), "NOTXML": str(tmp_path / "notxml.opml"), "EMPTY": str(tmp_path / "empty")}
    proc = run_cli(*[subst.get(a, a) for a in args])
    if args[0] == "compact":
        assert proc.returncode in (0, 2) and "Traceback" not in proc.stderr
        return
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr
    assert not (tmp_path / "out").exists()


def test_rules_json_lists_every_rule_once() -> None:
    proc = run_cli("rules", "--json")
    assert proc.returncode == 0
    rules = [json.loads(line) for line in proc.stdout.splitlines()]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids)) >= 40
    assert all(set(r) >= {"id", "severity", "section", "w3c"} for r in rules)
    assert {"MissingAtomSelfLink", "InvalidRFC2822Date", "DuplicateEnclosure"} <= {n for r in rules for n in r["w3c"]}


def test_scrapy_crawl_command_works_with_spider_arguments(tmp_path: Path, demo_server: object) -> None:
    import subprocess
    import sys

    from tests.conftest import REPO, read_table

    url = f"{demo_server.url}/blog-a/"  # type: ignore[attr-defined]
    out = tmp_path / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "scrapy",
            "crawl",
            "census",
            "-a",
            f"url={url}",
            "-s",
            f"FEEDCENSUS_OUT={out}",
            *QUICK_CRAWL,
            "-s",
            "LOG_LEVEL=WARNING",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    feeds = read_table(out, "feeds").to_pylist()
    assert {f["url"].rsplit("/", 1)[1] for f in feeds} == {"feed.xml", "atom.xml"}


def test_usable_inputs_named_ones_reported_and_the_inputs_handed_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from crawler.cli.crawl import check_usable
    from crawler.cli.errors import CliError

    seeds = tmp_path / "seeds.txt"
    long_url = "http://site.example/" + "x" * 100
    seeds.write_text(f"http://site.example/\n{long_url}\n", encoding="utf-8")
    args = argparse.Namespace(seeds=[str(seeds)], opml=[], url=["ftp://named.example/feed"])
    inputs = check_usable(args, 60)
    # One usable input is enough to start; a URL given on the command line that cannot be fetched is
    # still named (the seeds file's too-long line is the crawl's to record, not reported here).
    assert capsys.readouterr().err.splitlines() == [
        "feedcensus crawl: skipping ftp://named.example/feed: only http and https are fetched, not ftp:"
    ]
    assert [u for u, _ in inputs.requests] == ["http://site.example/", long_url, "ftp://named.example/feed"]
    seeds.write_text(f"{long_url}\n{long_url}2\n", encoding="utf-8")
    with pytest.raises(CliError, match=r"nothing to crawl: http://site\.example/x+: URL longer than 60 .*\(and 2 more"):
        check_usable(args, 60)
