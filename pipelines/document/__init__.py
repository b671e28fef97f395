"""The pure document code: sniff, parse, tally, profile checks, rows. No Scrapy."""
