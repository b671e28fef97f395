"""The whole per-feed document path as one pure function: bytes in, table rows out.

``document_rows`` parses a feed (``feedparse``), checks it against the RSS Best
Practices Profile (``checks``) and builds the rows of every table (``rows``).
It is what the crawl runs for every feed it parses, either in the crawling
process or in a worker process of :mod:`pipelines.document.pool`; what needs
the earlier jobs of the dataset (which items are new, when the feed is next
due) is added afterwards by ``pipelines.feed``, in the crawling process.
"""

from __future__ import annotations

from datetime import datetime

from pipelines.document.checks import CheckResult, RuleFailure, check_feed
from pipelines.document.feedparse import parse_feed
from pipelines.document.rows import TableRows, feed_rows
from schemas.items import FeedDocument

__all__ = ["document_rows"]


def document_rows(
    doc: FeedDocument,
    now: datetime | None = None,
    *,
    job_id: str | None = None,
    content_hash: str | None = None,
) -> tuple[TableRows, tuple[RuleFailure, ...]]:
    """The rows of one fetched feed, and the profile rules that failed internally on it."""
    parsed = parse_feed(doc.body, doc.final_url, doc.headers, with_notes=True)
    findings = CheckResult()
    if parsed.root is not None:
        findings = check_feed(parsed.root, format=parsed.format, body=doc.body, now=now, notes=parsed.notes)
    parsed.root = parsed.notes = None  # the tree is not needed past this point: free it now
    return feed_rows(doc, parsed, findings, job_id=job_id, content_hash=content_hash), findings.failures
