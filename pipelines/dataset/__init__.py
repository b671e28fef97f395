"""The Parquet dataset: crash-safe commits, reading runs back, compaction. No Scrapy."""
