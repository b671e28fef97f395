"""feedcensus crawler: the Scrapy project, the CLI and the pure discovery / OPML code."""
