"""The pure fetch-side code: seeds, OPML, autodiscovery, feed-URL guessing, URL and network safety. No Scrapy."""
