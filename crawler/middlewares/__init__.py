"""Scrapy downloader and spider middlewares, one per module; ``jobfrontier.py`` is no middleware but the
helper that finds a distributed job's frontier for them."""
