"""Scrapy downloader and spider middlewares, one per module."""
