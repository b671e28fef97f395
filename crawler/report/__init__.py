"""The survey report: published reference figures, the table model, and its renderings.

The survey's tables are put together in :mod:`crawler.report.survey` (``compute``, ``run``),
over the job's views of :mod:`crawler.report.views` (``connect``); the element tables are
:mod:`crawler.report.elements`, those about the crawl :mod:`crawler.report.crawled`. This
package also holds what they are compared with (:mod:`crawler.report.reference`),
the plain-data model (:mod:`crawler.report.model`) and the Markdown, CSV and
HTML renderings (:mod:`crawler.report.render`).
"""

from __future__ import annotations

from crawler.report.model import Chart, Column, Survey, Table

__all__ = ["Chart", "Column", "Survey", "Table"]
