"""Two layers of docs/architecture.md in one package.

The pure core (layer 1, no Scrapy): ``document/`` (sniff, parse, tally, profile checks, rows, the
document workers) and ``dataset/`` (the Parquet dataset: commits, reading back, compaction, the
crawl state). The thin Scrapy item pipelines over it (layer 3): ``feed.py`` (a feed's document
work), ``reflexive.py`` (the reflexive hold) and ``parquet.py`` (every item's rows to the dataset).
"""
