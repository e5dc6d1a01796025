#!/usr/bin/env python3
"""pyiceberg's plan_files for one day of a table, through our REST server and through
pyiceberg's own SqlCatalog (the same metadata file registered there), best of 7 each.

    rest_plan_files.py REST_URI METADATA_JSON SQLITE_PATH DAY

prints {"rest": seconds, "rest_files": n, "sql": seconds, "sql_files": n}.
"""

import json
import sys
import time

from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.catalog.sql import SqlCatalog


def best(table_loader, day: str) -> tuple:
    times, files = [], 0
    for _ in range(7):
        start = time.perf_counter()
        table = table_loader()
        files = len(list(table.scan(row_filter=f"ts >= '{day}T00:00:00' and ts < '{day}T23:59:59'").plan_files()))
        times.append(time.perf_counter() - start)
    return min(times), files


def main() -> int:
    uri, metadata, sqlite, day = sys.argv[1:5]
    rest = RestCatalog("hp", uri=uri)
    sql = SqlCatalog("bench", uri=f"sqlite:///{sqlite}", warehouse="file:///tmp")
    sql.create_namespace("public")
    sql.register_table("public.many", metadata)
    rest_s, rest_files = best(lambda: rest.load_table("public.many"), day)
    sql_s, sql_files = best(lambda: sql.load_table("public.many"), day)
    print(json.dumps({"rest": rest_s, "rest_files": rest_files, "sql": sql_s, "sql_files": sql_files}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
