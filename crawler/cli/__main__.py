"""``python -m crawler.cli``: the ``feedcensus`` command."""

import sys

from crawler.cli import main

sys.exit(main())
