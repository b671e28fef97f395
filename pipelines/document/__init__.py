"""The pure document code: sniff, parse, tally, profile checks, rows. No Scrapy.

The whole per-feed path is one function (``process.py``: ``document_rows``). The pool of worker
processes that runs it off the crawling process: ``jobs.py`` the work a worker does (``Task``, ``Job``)
and its answers (``Parsed``, ``Lost``), ``pool.py`` the pool (``DocumentPool``), ``poolworker.py`` one
worker process as the pool drives it, ``poolserve.py`` what runs inside a worker and the frames both
ends use.
"""
