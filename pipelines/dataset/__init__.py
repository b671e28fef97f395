"""The Parquet dataset: crash-safe commits, reading runs back, compaction. No Scrapy.

``commits.py`` writes a run (``DatasetWriter``) and ``markers.py`` reads the marker files its
commits leave; ``store.py`` finds a dataset and reads its runs back (``list_jobs``,
``open_table``); ``claims.py`` keeps one row per key when several writers share a job;
``compact.py`` merges small files (``compactwrite.py`` writes the new ones, ``compactswap.py``
swaps them in); ``state.py`` and ``statefiles.py`` hold the crawl state of incremental crawls,
``schedule.py`` when a feed is due; ``jobids.py`` the default job id and what makes one unusable;
``faults.py`` lets tests stop a commit half-way;
``nopandas.py`` keeps pandas out of the processes that only convert values to Arrow.
"""
