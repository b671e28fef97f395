"""Every Scrapy extension of the project but the frontier's worker (``crawler/frontier/worker.py``).

``crawler/settings.py`` lists them in ``EXTENSIONS`` (the census spider adds the frontier's worker there
in a distributed crawl), and every class a component finds with ``crawler.get_extension`` is one of them
or that worker.

- ``dataset.py``: the ``Dataset`` every row goes through, with the resume state, committing on its own thread;
- ``history.py``: the ``History`` of the dataset's earlier jobs (incremental crawls: due times, validators);
- ``documentpool.py``: the crawl's document workers (``FEEDCENSUS_WORKERS``);
- ``progress.py``: progress while a crawl runs and its summary;
- ``resume.py``: the resume journal and duplicate filter (``--resume``);
- ``workers.py``: the process's ``workers`` row;
- ``archive.py``: where each response's WARC record is (``--warc``, a replay);
- ``throttle.py``: AutoThrottle that takes 304 and 206 as good answers, and a host's robots.txt ``Crawl-delay`` as its delay;
- ``settingscheck.py``: every crawl's settings checked when the crawler is built;
- ``interpreter.py``: the base of the interpreter settings a crawl holds while its engine runs, the
  thread switch interval (``switching.py``) and the garbage collector's threshold (``gc_threshold.py``).
"""
