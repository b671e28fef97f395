"""Keep pandas (and, in the document workers, numpy) out of the processes that only convert plain values to Arrow.

pyarrow imports pandas, when it is installed, the first time it converts Python objects (to tell
pandas' own values and nulls apart), and goes on without it when that import fails. The crawl
converts only the plain values of its rows, and pandas would cost each process about 0.25-0.4 s of
CPU and 35-45 MiB of memory for nothing: a document worker's peak was 130 MiB with it and 87 without;
the crawling process, which imported it at the dataset's first commit, 230 MiB with it and 197 without.

pyarrow also imports numpy, when it is installed (the notebooks' pandas needs it), as pyarrow itself is
imported, and works without it on plain values. A document worker runs only the project's code, so
it refuses numpy too: measured, a worker ready in 0.23 s instead of 0.33 s, and 56 MiB resident after
its imports instead of 67.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import ModuleType


class Refuse:
    """An import hook that makes ``import <package>`` (and its submodules) fail, for the packages named."""

    def __init__(self, *packages: str) -> None:
        self.packages = frozenset(packages)

    def find_spec(self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None) -> None:
        if name.partition(".")[0] in self.packages:
            raise ModuleNotFoundError(f"{name} is not imported here (pipelines/dataset/nopandas.py)", name=name)
        return None


def refuse_numpy_and_pandas() -> None:
    """For the life of this process (a document worker, which runs only the project's code); call it before
    pyarrow is imported, which looks for numpy once, as it is imported."""
    sys.meta_path.insert(0, Refuse("numpy", "pandas"))


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

    hook = Refuse("pandas")
    sys.meta_path.insert(0, hook)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(hook)
