"""Web archives: WARC files the crawl writes (``--warc``) and, later, reads back."""
