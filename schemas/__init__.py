"""Arrow schemas of the feedcensus datasets, and the namespace prefix table."""

from schemas.namespaces import PREFIXES, URI_TO_PREFIX, element_name
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
