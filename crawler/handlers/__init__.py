"""Scrapy download handlers: where responses come from when it is not the network (``feedcensus replay``)."""
