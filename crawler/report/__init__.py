"""The survey report: published reference figures, the table model, and its renderings; and the
other reports over a dataset.

The survey's tables are put together in :mod:`crawler.report.survey` (``compute``, ``run``),
over the job's views of :mod:`crawler.report.views` (``connect``); the element tables are
:mod:`crawler.report.elements`, those about the crawl :mod:`crawler.report.crawled`, the Atom
section :mod:`crawler.report.atom`, a web-archive census's coverage :mod:`crawler.report.coverage`,
and the breadth sections the package :mod:`crawler.report.breadth`; the helpers every section
uses over DuckDB are :mod:`crawler.report.query`. This package also holds what they are compared
with (:mod:`crawler.report.reference`), the plain-data model (:mod:`crawler.report.model`) and
the Markdown, CSV and HTML renderings (:mod:`crawler.report.render`).

Two reports are not the survey: what changed between two runs (:mod:`crawler.report.changes`,
``feedcensus changes``) and when each known feed is next due (:mod:`crawler.report.due`,
``feedcensus due``).
"""

from __future__ import annotations

from crawler.report.model import Chart, Column, Survey, Table

__all__ = ["Chart", "Column", "Survey", "Table"]
