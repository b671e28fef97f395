"""The feedcensus spiders."""
