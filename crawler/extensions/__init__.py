"""Scrapy extensions: progress and the resumable-crawl journal."""
