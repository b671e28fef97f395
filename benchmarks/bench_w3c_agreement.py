"""The W3C Feed Validator and our checks side by side on real feeds: agreement per message and overall.

For every feed of ``shared/corpus/benchmark_feeds`` (or the files given), the validator's
messages (``shared/tools/w3c-feedvalidator/validate.py``, run once in its own venv; its
results are cached in ``<out>/validator.jsonl``, so re-runs only redo our side) are set
against the findings ``feedcensus lint`` gives, computed here by the same pure functions
(``parse_feed``, ``check_feed``, ``not_feed_findings``) in this process.

Counting, per feed, per W3C message class:

* the classes compared on a feed are the ones some rule of its format names (``Rule.w3c``,
  :data:`SOURCES_OF`): a message no such rule names is none of ours to agree with (the
  validator's HTML security messages on RSS descriptions, say: only Atom rules check those);
* a finding of a rule is a true positive for each of its messages the validator reported,
  and when it reported none of them, one false positive (under the rule's first message);
* a message the validator reported that no finding of ours names is a false negative;
* a feed the validator stopped reading at an XML error (``SAXError``) is compared on the
  well-formedness verdict alone (class ``SAXError``: ours is ``well_formed``); on a feed it
  read whole, a feed we read as not well-formed is a false positive of that class.

Agreement is tp / (tp + fp + fn), per class and over all of them. ``--list`` prints every
difference, feed by feed (``docs/conformance.md`` names the ones left).

Usage::

    python benchmarks/bench_w3c_agreement.py --validator-python /tmp/fv/bin/python
    python benchmarks/bench_w3c_agreement.py            # later runs: the cached validator results
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from common import CORPUS, WORK  # noqa: E402

from crawler.cli.documents import not_feed_findings  # noqa: E402
from pipelines.document.checks import NOT_FEED_RULES, RULES, Finding, check_feed  # noqa: E402
from pipelines.document.checks.rules import ATOM, NAMESPACE, PROFILE, RSS1, RSS2  # noqa: E402
from pipelines.document.feedparse import parse_feed  # noqa: E402
from schemas.vocab import FeedFormat  # noqa: E402

FEEDS = CORPUS / "benchmark_feeds"
VALIDATOR = REPO.parent / "shared" / "tools" / "w3c-feedvalidator" / "validate.py"
#: The class a feed's well-formedness verdict is counted under (the validator's message for an XML error).
XML_ERROR = "SAXError"
#: Files per validator process (one process per chunk, so a hang or crash costs one chunk).
CHUNK = 20


@dataclass
class Tally:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def agreement(self) -> float:
        total = self.tp + self.fp + self.fn
        return self.tp / total if total else 1.0


def feed_files(paths: list[str]) -> list[Path]:
    if paths:
        return [Path(p) for p in paths]
    return sorted(p for p in FEEDS.iterdir() if p.is_file() and p.name != "manifest.tsv")


def validator_results(files: list[Path], cache: Path, python: str | None) -> dict[str, dict[str, object]]:
    """File name -> the validator's line for it: from ``cache``, the missing ones run now (and added to it)."""
    cached: dict[str, dict[str, object]] = {}
    if cache.exists():
        for line in cache.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            cached[Path(row["file"]).name] = row
    missing = [f for f in files if f.name not in cached]
    if missing:
        if python is None:
            sys.exit(
                f"bench_w3c_agreement: {len(missing)} feeds have no cached validator result in {cache}; "
                "pass --validator-python (a Python with lxml, html5lib and rdflib: see the validator's README)"
            )
        cache.parent.mkdir(parents=True, exist_ok=True)
        with cache.open("a", encoding="utf-8") as out:
            for i in range(0, len(missing), CHUNK):
                chunk = missing[i : i + CHUNK]
                done = subprocess.run(
                    [python, str(VALIDATOR), *map(str, chunk)], capture_output=True, text=True, timeout=1800
                )
                for line in done.stdout.splitlines():
                    row = json.loads(line)
                    cached[Path(row["file"]).name] = row
                    out.write(line + "\n")
                print(f"validator: {min(i + CHUNK, len(missing))}/{len(missing)}", file=sys.stderr)
    return cached


def our_findings(body: bytes) -> tuple[bool, str, list[Finding]]:
    """(well-formed, format, findings) as ``feedcensus lint`` gives them."""
    parsed = parse_feed(body, "http://www.example.com/feed.xml", {"content-type": "application/xml"})
    if parsed.format == FeedFormat.UNKNOWN:
        return parsed.well_formed, parsed.format, not_feed_findings(parsed.root)
    findings = [] if parsed.root is None else check_feed(parsed.root, format=parsed.format, body=body)
    return parsed.well_formed, parsed.format, findings


#: The rule sources that check a document of each format (``check_feed``; ``lint`` adds ``root-not-feed``).
SOURCES_OF: dict[str, frozenset[str]] = {
    FeedFormat.RSS: frozenset({PROFILE, RSS2, NAMESPACE}),
    FeedFormat.RDF: frozenset({RSS1, NAMESPACE}),
    FeedFormat.ATOM: frozenset({ATOM}),
}


def compared_classes(fmt: str) -> set[str]:
    """The message classes compared on a feed of this format: those its rules name, and the XML error.

    A class only rules of another format name is not ours to agree with here: the validator's
    ``SecurityRisk`` on an RSS description is not checked (no RSS rule reads a description's HTML for it),
    as the RSS rules said nothing of Atom documents before Atom was checked.
    """
    sources = SOURCES_OF.get(fmt)
    rules = RULES.values() if sources is None else [r for r in RULES.values() if r.source in sources]
    if sources is None:
        rules = [r for r in rules if r.id in NOT_FEED_RULES]
    return {name for rule in rules for name in rule.w3c} | {XML_ERROR}


def compare(
    validator: list[str], well_formed: bool, findings: list[Finding], compared: set[str]
) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """(true positive classes, false positives as (class, rule), false negative classes) on one feed."""
    tp: set[str] = set()
    fp: list[tuple[str, str]] = []
    reported = set(validator)
    if XML_ERROR in reported:  # the validator stopped there: only the well-formedness verdict counts
        return ([XML_ERROR], [], []) if not well_formed else ([], [], [XML_ERROR])
    if not well_formed:
        fp.append((XML_ERROR, "not well-formed"))
    for f in findings:
        names = RULES[f.rule].w3c
        hit = reported.intersection(names)
        if hit:
            tp |= hit
        elif names:
            fp.append((names[0], f.rule))
    fn = sorted((reported & compared) - tp)
    return sorted(tp), fp, fn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", help="feed files (default: every feed of benchmark_feeds)")
    ap.add_argument("--out", type=Path, default=WORK / "w3c_agreement", help="output dir (the validator cache)")
    ap.add_argument("--validator-python", help="the Python to run the validator with (needed when not cached)")
    ap.add_argument("--list", action="store_true", help="print every difference, feed by feed")
    ap.add_argument(
        "--every-class",
        action="store_true",
        help="compare on every feed every class some rule of any format names (the count before per-format classes)",
    )
    args = ap.parse_args()

    files = feed_files(args.files)
    results = validator_results(files, args.out / "validator.jsonl", args.validator_python)
    compared: dict[str, set[str]] = {str(fmt): compared_classes(fmt) for fmt in FeedFormat}
    if args.every_class:
        every = {name for rule in RULES.values() for name in rule.w3c} | {XML_ERROR}
        compared = dict.fromkeys(compared, every)
    tallies: dict[str, Tally] = {}
    formats: Counter[str] = Counter()
    skipped = 0
    lines = []
    for path in files:
        row = results.get(path.name)
        if row is None or row.get("error"):
            skipped += 1
            continue
        well_formed, fmt, findings = our_findings(path.read_bytes())
        formats[str(fmt)] += 1
        messages = [str(m) for m in row["messages"]]  # type: ignore[attr-defined]
        tp, fp, fn = compare(messages, well_formed, findings, compared.get(str(fmt), compared[FeedFormat.UNKNOWN]))
        for name in tp:
            tallies.setdefault(name, Tally()).tp += 1
        for name, rule in fp:
            tallies.setdefault(name, Tally()).fp += 1
            lines.append(f"{path.name}\t{fmt}\tfp\t{name}\t{rule}")
        for name in fn:
            tallies.setdefault(name, Tally()).fn += 1
            lines.append(f"{path.name}\t{fmt}\tfn\t{name}")
    total = Tally(*(sum(getattr(t, k) for t in tallies.values()) for k in ("tp", "fp", "fn")))
    print(f"feeds compared: {sum(formats.values())} ({dict(formats)}); validator failed on {skipped}")
    print(f"{'message':32} {'tp':>5} {'fp':>5} {'fn':>5}  agreement")
    for name, t in sorted(tallies.items(), key=lambda kv: (-(kv[1].fp + kv[1].fn), kv[0])):
        print(f"{name:32} {t.tp:5} {t.fp:5} {t.fn:5}  {t.agreement:.3f}")
    print(f"{'overall':32} {total.tp:5} {total.fp:5} {total.fn:5}  {total.agreement:.3f}")
    if args.list:
        print("\n".join(lines))


if __name__ == "__main__":
    main()
