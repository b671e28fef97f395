"""Tasks for the document pool's tests, in a module a worker can import by name (``tests.pool_tasks``).

A class defined in a test module would be pickled under the name pytest gave that module, which a
worker cannot import.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Loaded:
    """A task answering which of these modules the worker has imported."""

    names: tuple[str, ...]

    def run(self) -> dict[str, bool]:
        return {name: name in sys.modules for name in self.names}
