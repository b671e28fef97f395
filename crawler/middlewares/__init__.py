"""Scrapy downloader and spider middlewares, one per module (they find a distributed job's frontier with
``crawler/extensions/jobfrontier.py``)."""
