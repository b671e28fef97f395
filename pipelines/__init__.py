"""Item pipelines and the pure parse, tally and check code they call."""
