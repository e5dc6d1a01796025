"""Partition-aware Iceberg tables for DataFusion, from Python.

``Session`` runs any statement the ``hidden-partitions`` CLI runs against a
warehouse and returns a ``QueryResult`` that speaks the Arrow PyCapsule
interface: ``pyarrow.table(result)``, ``polars.from_arrow(result)``,
``result.to_pandas()`` and ``result.to_pylist()`` share its buffers.
"""

from ._native import (
    FFI_MAJOR_VERSION,
    CommitConflictError,
    CommitStateUnknownError,
    HiddenPartitionsError,
    QueryResult,
    Session,
    Function,
    WarehouseCatalog,
    __version__,
    functions,
)


def register(ctx, warehouse="./warehouse", name="hp", storage_options=None, catalog=None, functions=True):
    """Register a warehouse as catalog ``name`` of a datafusion-python
    ``SessionContext``: its namespaces are the catalog's schemas (``public``
    as in the CLI), so ``ctx.sql("SELECT … FROM hp.public.events WHERE …")``
    prunes files and ``INSERT INTO hp.public.events …`` commits. Our SQL
    functions (the partition transforms such as ``day`` and ``bucket``, and
    the Variant functions such as ``parse_json``) are registered too, unless
    ``functions=False``.

    Needs datafusion-python with the same FFI major version as this package
    (``FFI_MAJOR_VERSION``, 55)."""
    try:
        import datafusion
    except ImportError as e:
        raise HiddenPartitionsError(
            f"register() needs datafusion-python {FFI_MAJOR_VERSION}.x (pip install 'datafusion=={FFI_MAJOR_VERSION}.*'): {e}"
        ) from e
    found = getattr(datafusion, "__version__", "unknown")
    major = found.split(".")[0]
    if major != str(FFI_MAJOR_VERSION):
        raise HiddenPartitionsError(
            f"register() needs datafusion-python {FFI_MAJOR_VERSION}.x, whose FFI this package was built "
            f"with; found datafusion {found} (pip install 'datafusion=={FFI_MAJOR_VERSION}.*')"
        )
    ctx.register_catalog_provider(
        name, WarehouseCatalog(warehouse=warehouse, storage_options=storage_options, catalog=catalog)
    )
    if functions:
        for f in _functions():
            if f.is_aggregate:
                ctx.register_udaf(datafusion.udaf(f))
            else:
                ctx.register_udf(datafusion.udf(f))


_functions = functions

__all__ = [
    "CommitConflictError",
    "CommitStateUnknownError",
    "Function",
    "HiddenPartitionsError",
    "QueryResult",
    "Session",
    "WarehouseCatalog",
    "__version__",
    "functions",
    "register",
]
