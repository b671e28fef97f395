"""Arrow schemas of the feedcensus datasets, and the namespace prefix table.

The names from ``schemas.tables`` are imported when first used (PEP 562), not with the package:
``schemas.tables`` imports pyarrow, and every ``schemas.vocab`` or ``schemas.items`` import runs this
file first. (The document workers import pyarrow too, since they build rows into Arrow record
batches; a crawl's first imports need only those two.)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from schemas.namespaces import PREFIXES, URI_TO_PREFIX, element_name

if TYPE_CHECKING:
    from schemas.tables import (
        PARTITION_KEY,
        SCHEMA_VERSION,
        TABLES,
        Field,
        SchemaVersionError,
        arrow_schema,
        check_version,
    )

__all__ = [
    "PARTITION_KEY",
    "PREFIXES",
    "SCHEMA_VERSION",
    "TABLES",
    "URI_TO_PREFIX",
    "Field",
    "SchemaVersionError",
    "arrow_schema",
    "check_version",
    "element_name",
]


def __getattr__(name: str) -> Any:
    """A name of ``__all__`` not bound yet is one of ``schemas.tables``': imported now (PEP 562)."""
    if name in __all__:
        return getattr(importlib.import_module("schemas.tables"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
