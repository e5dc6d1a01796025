"""Partition-aware Iceberg tables for DataFusion, from Python.

``Session`` runs any statement the ``hidden-partitions`` CLI runs against a
warehouse and returns a ``QueryResult`` that speaks the Arrow PyCapsule
interface: ``pyarrow.table(result)``, ``polars.from_arrow(result)``,
``result.to_pandas()`` and ``result.to_pylist()`` share its buffers.
"""

from ._native import (
    CommitConflictError,
    CommitStateUnknownError,
    HiddenPartitionsError,
    QueryResult,
    Session,
    __version__,
)

__all__ = [
    "CommitConflictError",
    "CommitStateUnknownError",
    "HiddenPartitionsError",
    "QueryResult",
    "Session",
    "__version__",
]
