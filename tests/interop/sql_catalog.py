#!/usr/bin/env python3
"""pyiceberg 0.12's SqlCatalog (SQLite or PostgreSQL) beside our `--catalog` client.

tests/catalog_clients.rs runs one step per call and checks the rows with our own engine on the
same catalog. Rows are rendered by iceberg_read.py's rules.

    sql_catalog.py create URI WAREHOUSE           namespace ns, table ns.events (day(ts)), 3 rows
    sql_catalog.py read URI WAREHOUSE TABLE [FILTER]
    sql_catalog.py list URI WAREHOUSE              {"namespace": [tables…]} of every namespace
    sql_catalog.py create-keyed URI WAREHOUSE     table ns.keyed (id BIGINT NOT NULL, name), identifier
                                                  field id, rows (1, 'a'), (2, 'b')
    sql_catalog.py append URI WAREHOUSE TABLE START COUNT
                                                  COUNT appends of one row each (ids START…), each
                                                  retried on a lost commit; prints {"appended", "retries"}

URI is SQLAlchemy's (sqlite:////abs/path.db, postgresql+psycopg2://user@host:port/db); the catalog
name is "default", as our client's.
"""

from __future__ import annotations

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rest_catalog import create_events, events_arrow, rows  # noqa: E402


def catalog(uri: str, warehouse: str):
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog("default", uri=uri, warehouse=f"file://{warehouse}")


def create(uri: str, warehouse: str) -> dict:
    table = create_events(
        catalog(uri, warehouse),
        False,
        [(1, "2024-01-01T10:00:00", "a"), (2, "2024-01-02T10:00:00", "b"), (3, "2024-01-03T11:00:00", "c")],
    )
    return {"rows": rows(table.scan().to_arrow()), "metadata_location": table.metadata_location}


def create_keyed(uri: str, warehouse: str) -> dict:
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    cat = catalog(uri, warehouse)
    cat.create_namespace_if_not_exists("ns")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType(), required=False),
        identifier_field_ids=[1],
    )
    table = cat.create_table("ns.keyed", schema=schema)
    arrow = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])
    table.append(pa.table({"id": [1, 2], "name": ["a", "b"]}, schema=arrow))
    return {"rows": rows(table.scan().to_arrow())}


def read(uri: str, warehouse: str, name: str, row_filter: str | None) -> dict:
    table = catalog(uri, warehouse).load_table(name)
    scan = table.scan(row_filter=row_filter) if row_filter else table.scan()
    return {"rows": rows(scan.to_arrow()), "files": len(list(scan.plan_files()))}


def listing(uri: str, warehouse: str) -> dict:
    cat = catalog(uri, warehouse)
    return {
        ".".join(ns): sorted(".".join(t[len(ns) :]) for t in cat.list_tables(ns)) for ns in cat.list_namespaces()
    }


def append(uri: str, warehouse: str, name: str, start: int, count: int) -> dict:
    from pyiceberg.exceptions import CommitFailedException

    cat = catalog(uri, warehouse)
    retries = 0
    for i in range(count):
        ident = start + i
        for attempt in range(50):
            try:
                cat.load_table(name).append(events_arrow([(ident, "2024-03-01T00:00:00", "pyiceberg")]))
                break
            except CommitFailedException:
                retries += 1
                time.sleep(0.02 * (attempt + 1))
        else:
            raise RuntimeError(f"row {ident} never committed")
    return {"appended": count, "retries": retries}


def main() -> int:
    args = sys.argv[1:]
    if len(args) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    action, uri, warehouse = args[0], args[1], args[2]
    if action == "create":
        result = create(uri, warehouse)
    elif action == "create-keyed":
        result = create_keyed(uri, warehouse)
    elif action == "read":
        result = read(uri, warehouse, args[3], args[4] if len(args) > 4 else None)
    elif action == "list":
        result = listing(uri, warehouse)
    elif action == "append":
        result = append(uri, warehouse, args[3], int(args[4]), int(args[5]))
    else:
        print(f"unknown action {action}", file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
