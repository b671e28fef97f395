"""``feedcensus lint``, ``discover`` and ``rules``: documents read without crawling."""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import signal
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.cli.errors import EXIT_USAGE, CliError, fail
from crawler.fetch.words import counted
from schemas.vocab import FeedFormat

if TYPE_CHECKING:
    from pipelines.document.checks import Finding
    from schemas.items import FeedLink

#: The most ``lint`` and ``discover`` read of one document.
FETCH_LIMIT = 32 * 1024 * 1024


def read_source(source: str, timeout: float = 30.0) -> tuple[bytes, str, dict[str, str]]:
    """(body, url, headers) of a local file or an http(s) URL: at most :data:`FETCH_LIMIT` bytes, and a
    URL within ``timeout`` seconds in all (a server that sends a byte a second is no answer either)."""
    if source.startswith(("http://", "https://")):
        req = urllib.request.Request(source, headers={"User-Agent": "feedcensus-lint/0.1"})
        try:
            with _time_limit(timeout), _OPENER.open(req, timeout=timeout) as resp:
                body = _read_limited(resp.read1, source)
                if resp.length:  # the connection closed before the Content-Length it announced
                    raise fail(f"{source}: cut short: {resp.length} bytes of its Content-Length did not come")
                return body, resp.geturl(), {k.lower(): v for k, v in resp.headers.items()}
        except _TimedOut:
            raise fail(f"{source}: not read within the time limit ({timeout:g} s)") from None
        except urllib.error.HTTPError as exc:
            raise fail(f"{source}: HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise fail(f"{source}: {getattr(exc, 'reason', exc)}") from None
        except http.client.HTTPException as exc:  # not HTTP at all, a broken chunk
            raise fail(f"{source}: not a usable HTTP answer: {type(exc).__name__}: {exc}") from None
    if "://" in source and not source.startswith("file://"):
        raise fail(f"{source}: only local files and http(s) URLs can be read")
    path = Path(source[7:] if source.startswith("file://") else source)
    try:
        with path.open("rb") as fh:  # /dev/zero, a FIFO or a huge file: read up to the limit, no further
            return _read_limited(fh.read1, source), path.resolve().as_uri(), {}
    except OSError as exc:
        raise fail(f"{source}: {exc.strerror or exc}") from None


class _HttpRedirectsOnly(urllib.request.HTTPRedirectHandler):
    """Follows a redirect to an http(s) URL only: urllib's own follows one to ``ftp://`` too, which
    ``lint`` then reported as the FTP host's failure ("Name or service not known")."""

    def redirect_request(
        self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        if not newurl.lower().startswith(("http://", "https://")):  # urllib made it absolute already
            raise fail(f"{req.full_url}: redirected to {newurl}: only http(s) URLs are followed")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_HttpRedirectsOnly)


def _read_limited(read1: Callable[[int], bytes], source: str) -> bytes:
    """What ``read1`` gives until its end; CliError past :data:`FETCH_LIMIT` bytes."""
    chunks: list[bytes] = []
    size = 0
    while chunk := read1(1 << 20):
        chunks.append(chunk)
        size += len(chunk)
        if size > FETCH_LIMIT:
            raise fail(f"{source}: larger than {FETCH_LIMIT} bytes")
    return b"".join(chunks)


class _TimedOut(Exception):
    """:func:`_time_limit` ran out."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`_TimedOut` where this thread is once ``seconds`` have passed, in whatever call it waits
    (urllib's own timeout is per socket read: headers or a body sent a byte at a time never reach it).
    A timer signal, so the main thread only (the commands' own); elsewhere no limit but urllib's."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(_signum: int, _frame: object) -> None:
        raise _TimedOut

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


#: The scope of ``root-not-feed``: the root element sits in the document itself (the W3C validator's ``root``).
NOT_FEED_SCOPE = "document"


def not_feed_findings(root: Any) -> list[Finding]:
    """``lint``'s verdict on a document the parser reads as no feed, as a finding (the W3C validator's too).

    An ``rdf:RDF`` root is RSS 1.0's (and 0.90's), but no channel in either's
    namespace (nor a bare one) is under it: ``rss1-channel-missing``, as for an
    RSS 1.0 document without its channel. Any other root element is no feed's:
    ``root-not-feed``, in scope ``document``, its name as the example. None for
    a document without a root element (empty, garbage): it has no element to
    name. The census never calls this: it records such a document as the
    fetch_log outcome ``not_feed``, and the ``conformance`` table stays about
    feeds (``check_feed`` gives it no finding).
    """
    from pipelines.document.checks import RULES, Finding
    from pipelines.document.checks.rss1 import RDF_ROOT, ROOT_SCOPE
    from schemas.namespaces import element_name

    tag = getattr(root, "tag", None)
    if not isinstance(tag, str):  # no root element, or a comment / processing instruction
        return []
    if tag == RDF_ROOT:
        rule, scope, example = "rss1-channel-missing", ROOT_SCOPE, None
    else:
        rule, scope, example = "root-not-feed", NOT_FEED_SCOPE, element_name(tag)
    return [Finding(rule, RULES[rule].severity, scope, 1, example)]


def lint_document(source: str, body: bytes, url: str, headers: dict[str, str]) -> dict[str, Any]:
    """What ``lint --json`` prints for one document: the parse, the tally and the findings.

    A feed's findings are ``check_feed``'s, exactly as the census writes them to
    the ``conformance`` table; a document that is no feed gets
    :func:`not_feed_findings`, which the census does not report.
    """
    from pipelines.document.checks import check_feed
    from pipelines.document.feedparse import parse_feed

    parsed = parse_feed(body, url, headers)
    findings: list[Finding] = []
    if parsed.format == FeedFormat.UNKNOWN:
        findings = not_feed_findings(parsed.root)
    elif parsed.root is not None:
        findings = check_feed(parsed.root, format=parsed.format, body=body)
    return {
        "source": source,
        "format": parsed.format,
        "version": parsed.version,
        "well_formed": parsed.well_formed,
        "error": parsed.error,
        "encoding": parsed.encoding,
        "title": parsed.title,
        "item_count": len(parsed.items),
        "channel_elements": [u.element for u in parsed.usage if u.scope == "channel"],
        "item_elements": {u.element: u.items_with for u in parsed.usage if u.scope == "item"},
        "usage": [
            {"scope": u.scope, "element": u.element, "count": u.count, "items_with": u.items_with, "defined": u.defined}
            for u in parsed.usage
        ],
        "findings": [
            {"rule": f.rule, "severity": f.severity, "scope": f.scope, "count": f.count, "example": f.example}
            for f in findings
        ],
    }


#: ``lint``: a document was read but is not a feed (garbage, empty, an HTML page...).
EXIT_NOT_FEED = 1
#: The most characters of a finding's example ``lint`` shows on a line.
EXAMPLE_CHARS = 160
#: How control characters of an example are shown: escaped, so each finding stays on one line.
_ESCAPES = {i: f"\\x{i:02x}" for i in [*range(0x20), 0x7F]} | {
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): "\\t",
    0x85: "\\x85",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def is_feed(result: dict[str, Any]) -> bool:
    return bool(result["format"] != FeedFormat.UNKNOWN)


def show_example(example: str | None) -> str:
    """A finding's example on one line: control characters escaped, at most ``EXAMPLE_CHARS`` characters."""
    if not example:
        return ""
    if len(example) <= EXAMPLE_CHARS:
        return example.translate(_ESCAPES)
    return example[: EXAMPLE_CHARS - 1].translate(_ESCAPES) + "\u2026"


def not_a_feed(body: bytes, error: str | None) -> str:
    """What a document that is not a feed is, in a few words."""
    from pipelines.document.sniff import Sniffed, sniff

    if not body.strip():
        return "the document is empty"
    what = {Sniffed.HTML: "an HTML page", Sniffed.OPML: "an OPML subscription list"}.get(sniff(body))
    return what or error or "no feed root element"


def print_lint(result: dict[str, Any], body: bytes) -> None:
    if not is_feed(result):
        print(f"{result['source']}: not a feed: {not_a_feed(body, result['error'])}")
        print_findings(result["findings"])
        return
    head = " ".join(
        part
        for part in (result["format"], result["version"], "well-formed" if result["well_formed"] else "NOT well-formed")
        if part
    )
    print(
        f"{result['source']}: {head}, {counted(result['item_count'], 'item')}"
        + (f" ({result['error']})" if result["error"] else "")
    )
    print("  channel: " + ", ".join(result["channel_elements"]))
    print("  items:   " + ", ".join(f"{k} ({v})" for k, v in result["item_elements"].items()))
    print_findings(result["findings"])


def print_findings(findings: list[dict[str, Any]]) -> None:
    for f in findings:
        example = show_example(f["example"])
        print(f"  {f['severity']:7} {f['rule']} x{f['count']}" + (f": {example}" if example else ""))


def parse_headers(values: Sequence[str] | None) -> dict[str, str]:
    headers = {}
    for value in values or []:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise fail(f"--header takes 'Name: value', not {value!r}")
        headers[name.strip().lower()] = content.strip()
    return headers


class Sources:
    """Reads each input of a command in turn; one that cannot be read is a line on stderr and exit code 2."""

    def __init__(self, command: str, sources: Sequence[str]) -> None:
        self.command = command
        self.sources = sources
        self.code = 0

    def __iter__(self) -> Iterator[tuple[str, bytes, str, dict[str, str]]]:
        for source in self.sources:
            try:
                body, url, headers = read_source(source)
            except CliError as exc:
                print(f"feedcensus {self.command}: {exc}", file=sys.stderr)
                self.code = EXIT_USAGE
                continue
            yield source, body, url, headers


def cmd_lint(args: argparse.Namespace) -> int:
    """Exit code: 0 every document is a feed (broken ones too), 1 one is not a feed, 2 one cannot be read.

    A document that is not a feed exits with 1 whatever its findings (``root-not-feed``...); a feed's findings,
    errors too, never change the exit code.
    """
    extra_headers = parse_headers(args.header)
    sources = Sources("lint", args.sources)
    code = 0
    for source, body, url, headers in sources:
        result = lint_document(source, body, url, {**headers, **extra_headers})
        if not is_feed(result):
            code = EXIT_NOT_FEED
        if args.json:
            print(json.dumps(result, ensure_ascii=False, default=str))
        else:
            print_lint(result, body)
    return max(code, sources.code)


#: What ``discover`` shows for a relative href of a local file read without ``--base-url``.
RELATIVE_NOTE = "relative: give --base-url to resolve"


def cmd_discover(args: argparse.Namespace) -> int:
    """A local file has no URL of its own: its relative hrefs stay relative unless ``--base-url`` gives one.

    Each page: its feed links, each with the verdict of both specs and its reasons grouped by the spec they
    belong to, and the ``<link>`` elements that look like feed links but are none, with why (not followed)."""
    from crawler.fetch.discovery import REASON_SPECS, discover_page
    from schemas.items import LINK_FIELDS

    sources = Sources("discover", args.sources)
    for source, body, url, headers in sources:
        page_url = args.base_url or (None if url.startswith("file:") else url)
        found = discover_page(body, page_url, headers, follow_body=True)
        if args.json:
            links = [
                {
                    **{f: getattr(link, f) for f in LINK_FIELDS},
                    "followed": link.followable,
                    "reason_specs": {reason: REASON_SPECS[reason] for reason in link.reasons},
                }
                for link in found.links
            ]
            left_out = [
                {
                    "href": other.href,
                    "href_raw": other.href_raw,
                    "rel": other.rel,
                    "type": other.type,
                    "in_head": other.in_head,
                    "reason": other.reason,
                    "spec": other.spec,
                    "why": other.why,
                }
                for other in found.left_out
            ]
            print(json.dumps({"page": source, "links": links, "left_out": left_out}, ensure_ascii=False))
        else:
            print(f"{source}: {counted(len(found.links), 'feed link')}")
            for link in found.links:
                print(f"  {link.position}. {describe_link(link)}")
            if found.left_out:
                print(f"  {counted(len(found.left_out), 'link')} left out, not followed:")
            for other in found.left_out:
                href = other.href or other.href_raw or "(no href)"
                print(f"  - {href} [{other.type or 'no type'}] rel={other.rel!r}: {other.reason} ({other.why})")
    return sources.code


#: How ``discover`` names the spec a reason belongs to (crawler.fetch.discovery.REASON_SPECS).
SPEC_LABELS = {"rss": "RSS Autodiscovery", "atom": "Atom draft", "both": "both specs", "crawler": "crawler policy"}


def describe_link(link: FeedLink) -> str:
    """One line: the href, the type, the verdicts of both specs (``n/a``: a link the Atom draft does not judge,
    an RSS or RDF one), the rules the link fails grouped by the spec they belong to, and whether it is followed."""
    from crawler.fetch.discovery import REASON_SPECS

    href = link.href or link.href_raw
    reasons = list(link.reasons)
    relative = link.href is None and "href-relative-without-base" in reasons
    if relative:
        href = f"{link.href_raw} ({RELATIVE_NOTE})"
        reasons.remove("href-relative-without-base")
    atom = "n/a" if link.feed_type != "atom" else "ok" if link.conforms_atom else "no"
    parts = [href, f"[{link.type}]", f"rss={'ok' if link.conforms_rss else 'no'} atom={atom}"]
    for spec, label in SPEC_LABELS.items():
        mine = [reason for reason in reasons if REASON_SPECS.get(reason) == spec]
        if mine:
            parts.append(f"{label}: {' '.join(mine)};")
    if parts[-1].endswith(";"):
        parts[-1] = parts[-1][:-1]
    if not link.followable and not relative:
        parts.append("(not followed)")
    return " ".join(parts)


def cmd_rules(args: argparse.Namespace) -> int:
    from pipelines.document.checks import RULES

    for rule in RULES.values():
        if args.json:
            print(
                json.dumps(
                    {
                        "id": rule.id,
                        "severity": rule.severity,
                        "section": rule.section,
                        "w3c": list(rule.w3c),
                        "source": rule.source,
                        "versions": rule.versions,
                        "title": rule.title,
                    }
                )
            )
        else:
            print(
                f"{rule.id:40} {rule.severity:7} {rule.source:9} §{rule.section:6} {','.join(rule.w3c):28} {rule.title}"
            )
    return 0
