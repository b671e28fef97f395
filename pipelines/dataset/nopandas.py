"""Keep pandas out of the processes that only convert plain values to Arrow.

pyarrow imports pandas, when it is installed, the first time it converts Python objects (to tell
pandas' own values and nulls apart), and goes on without it when that import fails. The crawl
converts only the plain values of its rows, and pandas would cost each process about 0.25-0.4 s of
CPU and 35-45 MiB of memory for nothing: a document worker's peak was 130 MiB with it and 87 without;
the crawling process, which imported it at the dataset's first commit, 230 MiB with it and 197 without.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import ModuleType


class NoPandas:
    """An import hook that makes ``import pandas`` (and its submodules) fail."""

    def find_spec(self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError("pandas is not imported here (pipelines/dataset/nopandas.py)", name=name)
        return None


def refuse_pandas() -> None:
    """For the life of this process (a document worker, which runs only the project's code)."""
    sys.meta_path.insert(0, NoPandas())


def pyarrow_without_pandas() -> None:
    """Let pyarrow look for pandas now, and not find it; code that imports pandas itself later still can.

    pyarrow looks at its first conversion of Python values and remembers the answer, so its later
    conversions (the dataset writer's) do not import pandas. It looks again when asked for pandas
    itself (``to_pandas``, ``from_pandas``), which then work; until then, a pandas object given to
    ``pa.array`` is read as a plain sequence (NaN stays NaN instead of null). So call this only in a
    process whose own code converts no pandas objects (``feedcensus crawl``: crawler/cli/crawl.py).
    Nothing happens when pandas is already imported.
    """
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    hook = NoPandas()
    sys.meta_path.insert(0, hook)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(hook)
